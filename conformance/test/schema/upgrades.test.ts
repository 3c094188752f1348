import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '@taskrow/core';
import { taskrow } from '@taskrow/mysql2';
import { useMigratedPool } from '../../src/setup.js';
import { label, targets } from '../../src/targets.js';

// Upgrades that refuse to go wrong: the schema records the oldest build that may use it, a build
// older than that refuses to start naming both versions, and a build newer than the schema is told
// to run migrate() when it meets what is missing.

for (const target of targets()) {
  describe(`${label(target)} · mysql2 · schema upgrades`, () => {
    const m = useMigratedPool(target, { prefix: `up${process.pid.toString(36)}_` });
    const versions = `\`${m.prefix}schema_migrations\``;

    it('records, per applied version, the oldest build that may use the schema', async () => {
      const rows = await m.probe.query(`SELECT version, min_build FROM ${versions} ORDER BY version`);
      expect(rows).toEqual([{ version: 1, min_build: 1 }]);
    });

    it('a build older than a breaking version refuses to start, naming both versions, and writes nothing', async () => {
      const future = SCHEMA_VERSION + 5;
      await m.probe.query(`INSERT INTO ${versions} (version, name, applied_at, min_build) VALUES (?, 'later_additive', UTC_TIMESTAMP(6), 1)`, [future - 1]);
      try {
        await expect(taskrow(m.pool, { prefix: m.prefix })).resolves.toBeDefined(); // an additive version leaves older builds running
        await m.probe.query(`INSERT INTO ${versions} (version, name, applied_at, min_build) VALUES (?, 'later_breaking', UTC_TIMESTAMP(6), ?)`, [
          future,
          future,
        ]);
        const refused = taskrow(m.pool, { prefix: m.prefix });
        await expect(refused).rejects.toMatchObject({ code: 'SCHEMA_TOO_NEW' });
        await expect(refused).rejects.toThrow(
          `is at version ${future} and may only be used by builds that know version ${future} or later; this build knows versions up to ${SCHEMA_VERSION}`,
        );
        expect((await m.probe.query(`SELECT COUNT(*) AS n FROM ${versions}`))[0]).toEqual({ n: 3 });
      } finally {
        await m.probe.query(`DELETE FROM ${versions} WHERE version > ?`, [SCHEMA_VERSION]);
      }
      await expect(taskrow(m.pool, { prefix: m.prefix })).resolves.toBeDefined();
    });

    it('a build newer than the schema is told to run migrate() when a column it needs is missing', async () => {
      const tr = await taskrow(m.pool, { prefix: m.prefix });
      await m.probe.query(`ALTER TABLE \`${m.prefix}dones\` RENAME COLUMN \`marked_at\` TO \`marked_old\``);
      try {
        await expect(tr.dones('ns').mark(['a'])).rejects.toMatchObject({ code: 'SCHEMA_MISSING', message: expect.stringContaining('run taskrow.migrate()') });
      } finally {
        await m.probe.query(`ALTER TABLE \`${m.prefix}dones\` RENAME COLUMN \`marked_old\` TO \`marked_at\``);
      }
      await expect(tr.dones('ns').mark(['a'])).resolves.toBe(1);
    });
  });
}
