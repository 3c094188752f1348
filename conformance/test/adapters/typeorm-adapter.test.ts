import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '@taskrow/core';
import { dropPrefix, freshName } from '@taskrow/core/conformance';
import { taskrow, taskrowMigrations } from '@taskrow/typeorm';
import { mysql2Probe } from '../../src/harnesses/mysql2.js';
import { inTypeormTransaction, typeormFor } from '../../src/harnesses/typeorm.js';
import { invalidClient, NOT_CLIENTS, throwsCode } from '../../src/factory-checks.js';
import { tablesOf, versionsOf } from '../../src/schema/inspect.js';
import { useReference } from '../../src/schema/reference.js';
import { label, targets } from '../../src/targets.js';

// The TypeORM adapter's own checks: what its factory refuses, QueryRunner transactions, and its migration classes.
const VERSIONS = MIGRATIONS.map((m) => m.version);

for (const target of targets()) {
  describe(`${label(target)} · typeorm · factory`, () => {
    it('rejects another type, an uninitialized DataSource and a non-TypeORM value, saying what it expected', async () => {
      // The shape of a DataSource of another type (a real one would need that type's driver installed).
      const postgres = { isInitialized: true, options: { type: 'postgres' }, manager: {}, createQueryRunner: () => undefined, query: async () => [] };
      await invalidClient(() => taskrow(postgres as never), /expected a DataSource of type "mysql" or "mariadb", got type "postgres"/);
      await invalidClient(() => taskrow(new DataSource({ type: 'mysql', url: target.url })), /not initialized/);
      for (const bad of NOT_CLIENTS) await invalidClient(() => taskrow(bad as never), /expected a TypeORM DataSource/);
    });

    it('rejects a destroyed DataSource, a manager given to taskrow(), and a DataSource, its own manager or a finished transaction given to in()', async () => {
      const ds = await typeormFor(target.url, 2);
      try {
        const tr = await taskrow(ds);
        await inTypeormTransaction(ds, 'rollback', async (manager) => {
          await invalidClient(() => taskrow(manager as never), /got a TypeORM EntityManager \(pass the DataSource/);
        });
        await invalidClient(() => tr.in(ds as never), /in\(\) expected the EntityManager of a transaction .*, got a DataSource/);
        await invalidClient(() => tr.in(ds.manager), /outside an active transaction/);
        const runner = ds.createQueryRunner();
        await runner.startTransaction();
        await runner.commitTransaction();
        await invalidClient(() => tr.in(runner), /outside an active transaction/);
        await runner.release();
      } finally {
        await ds.destroy();
      }
      await invalidClient(() => taskrow(ds), /not initialized .* or has been destroyed/);
    });

    it("joins a QueryRunner's transaction: its rollback takes the write away, its commit keeps it", async () => {
      const ds = await typeormFor(target.url, 2);
      const prefix = `${freshName('t')}_`;
      const probe = await mysql2Probe(target.url);
      try {
        const tr = await taskrow(ds, { prefix });
        await tr.migrate();
        const ns = freshName('ns');
        const dropped = ds.createQueryRunner();
        await dropped.startTransaction();
        await tr.in(dropped).dones(ns).mark(['gone']);
        await dropped.rollbackTransaction();
        await dropped.release();
        const kept = ds.createQueryRunner();
        await kept.startTransaction();
        await tr.in(kept).dones(ns).mark(['kept']);
        expect(await probe.query(`SELECT k FROM \`${prefix}dones\``)).toEqual([]); // not visible before the commit
        await kept.commitTransaction();
        await kept.release();
        const rows = await probe.query<{ k: Buffer }>(`SELECT k FROM \`${prefix}dones\``);
        expect(rows.map((r) => r.k.toString('utf8'))).toEqual(['kept']);
      } finally {
        await dropPrefix(probe, prefix);
        await probe.end();
        await ds.destroy();
      }
    });
  });

  describe(`${label(target)} · typeorm · migrations`, () => {
    const ref = useReference(target.url);
    const prefix = `${freshName('o')}_`;
    const migrationsTableName = `${prefix}typeorm_migrations`;
    let ds: DataSource;
    beforeAll(async () => {
      ref().prefixes.push(prefix);
      ds = new DataSource({ type: 'mysql', url: target.url, poolSize: 2, logging: false, migrations: taskrowMigrations({ prefix }), migrationsTableName });
      await ds.initialize();
    });
    afterAll(() => ds?.destroy());
    const names = (): string[] => taskrowMigrations({ prefix }).map((M) => new M().name);

    it("runMigrations() creates exactly the tables core's migrate() creates", async () => {
      const { probe, reference } = ref();
      const ran = await ds.runMigrations();
      expect(ran.map((m) => m.name)).toEqual(names());
      expect(names().map((n) => n.slice(0, -13))).toEqual(MIGRATIONS.map((m) => `${prefix}${String(m.version).padStart(4, '0')}_${m.name}`));
      const expected = await tablesOf(probe, reference);
      expect(expected.size).toBeGreaterThan(1);
      expect(await tablesOf(probe, prefix, ['typeorm_migrations'])).toEqual(expected);
      expect(await versionsOf(probe, prefix)).toEqual(VERSIONS);
    });

    it('leaves nothing for migrate() to apply, and a second runMigrations() runs nothing', async () => {
      const tr = await taskrow(ds, { prefix });
      expect((await tr.migrate()).applied).toEqual([]);
      expect(await ds.runMigrations()).toEqual([]);
      expect(await ds.showMigrations()).toBe(false);
    });

    it("keeps taskrow's tables and rows through undoLastMigration(), and re-applies cleanly", async () => {
      const { probe, reference } = ref();
      const tr = await taskrow(ds, { prefix });
      const ns = freshName('ns');
      await tr.dones(ns).mark(['kept']);
      await ds.undoLastMigration();
      expect(await ds.showMigrations()).toBe(true);
      expect(await tr.dones(ns).isDone('kept')).toBe(true);
      expect((await ds.runMigrations()).map((m) => m.name)).toEqual(names().slice(-1));
      expect(await tablesOf(probe, prefix, ['typeorm_migrations'])).toEqual(await tablesOf(probe, reference));
      expect(await tr.dones(ns).areDone(['kept', 'other'])).toEqual(['kept']);
    });

    it('rejects an invalid prefix with INVALID_NAME before anything runs', () => {
      throwsCode(() => taskrowMigrations({ prefix: 'no-dashes!' }), 'INVALID_NAME');
    });
  });
}
