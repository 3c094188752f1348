import { Kysely as Aliased } from 'kysely';
import { Kysely as K029 } from 'kysely-0.29';
import { Migrator } from 'kysely-0.29/migration';
import { afterAll, describe, expect, it } from 'vitest';
import { describeConformance, dropPrefix, freshName } from '@taskrow/core/conformance';
import { taskrow, taskrowMigrationProvider } from '@taskrow/kysely';
import { kyselyFor, kyselyHarness } from '../src/harnesses/kysely.js';
import { startingAt } from '../src/harnesses/shared.js';
import { mysql2Probe } from '../src/harnesses/mysql2.js';
import { libraryKitScope } from '../src/kit-scope.js';
import { label, targets } from '../src/targets.js';

// Kysely 0.29 on one server (the second, so it does not pile onto the 0.28 run's first): the kit's
// cases that reach the adapter (TASKROW_KIT=full: the whole kit), and the migration provider under
// 0.29's Migrator (moved to `kysely/migration`).
const target = startingAt(targets(), 1)[0]!;

describe(`${label(target)} · kysely-0.29 · migrations`, () => {
  const { db } = kyselyFor(target.url, 2);
  afterAll(() => db.destroy());

  it('runs on Kysely 0.29: this project resolves `kysely` to the 0.29 install', () => {
    expect(Aliased).toBe(K029);
    expect(db).toBeInstanceOf(K029);
  });

  it("migrates with 0.29's Migrator from kysely/migration, then taskrow finds its schema in place", async () => {
    const prefix = `${freshName('k29')}_`;
    const migrator = new Migrator({
      db: db as never,
      provider: taskrowMigrationProvider({ prefix }),
      migrationTableName: `${prefix}kysely_migration`,
      migrationLockTableName: `${prefix}kysely_migration_lock`,
    });
    const { error, results } = await migrator.migrateToLatest();
    expect(error).toBeUndefined();
    expect(results?.length).toBeGreaterThan(0);
    expect(results?.every((r) => r.status === 'Success')).toBe(true);
    const tr = await taskrow(db, { prefix });
    try {
      expect(await tr.migrate()).toMatchObject({ applied: [] });
      expect(await tr.dones('k29').mark(['a', 'b'])).toBe(2);
    } finally {
      await tr.close();
      const probe = await mysql2Probe(target.url);
      await dropPrefix(probe, prefix);
      await probe.end();
    }
  });
});

// Named `kysely-0.29` so the README matrix shows it as its own row.
describeConformance({ ...kyselyHarness([target]), adapter: 'kysely-0.29' }, libraryKitScope());
