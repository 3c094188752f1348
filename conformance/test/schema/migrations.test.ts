import type { Knex } from 'knex';
import { Migrator, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, TaskrowError, type Taskrow } from '@taskrow/core';
import { freshName } from '@taskrow/core/conformance';
import { taskrow as knexTaskrow, taskrowMigrations } from '@taskrow/knex';
import { LOOP_TABLE_COLUMNS, TASKROW_COLUMNS, taskrow as kyselyTaskrow, taskrowMigrationProvider, type TaskrowDatabase } from '@taskrow/kysely';
import { taskrow as mysql2Taskrow } from '@taskrow/mysql2';
import mysql from 'mysql2/promise';
import { knexFor } from '../../src/harnesses/knex.js';
import { kyselyFor } from '../../src/harnesses/kysely.js';
import { columnsOf, schemaOf, tablesOf, versionsOf } from '../../src/schema/inspect.js';
import { useReference } from '../../src/schema/reference.js';
import { label, targets } from '../../src/targets.js';

const VERSIONS = MIGRATIONS.map((m) => m.version);

/** Names of the procedures of `prefix` in the current database, sorted. */
async function proceduresOf(probe: { query<R>(sql: string, params?: unknown[]): Promise<R[]> }, prefix: string): Promise<string[]> {
  const rows = await probe.query<{ r: string }>(
    "SELECT routine_name AS r FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE' AND routine_name LIKE ? ORDER BY routine_name",
    [`${prefix.replace(/_/g, '\\_')}%`],
  );
  return rows.map((r) => r.r.slice(prefix.length)).sort();
}

/**
 * `n` taskrows over pools of one connection each, their pools ended after `use`. Not the shared
 * set-up: these cases migrate fresh prefixes themselves, as several processes or as another user.
 */
async function withProcesses<T>(url: string, prefix: string, n: number, use: (trs: Taskrow[]) => Promise<T>): Promise<T> {
  const pools = Array.from({ length: n }, () => mysql.createPool({ uri: url, connectionLimit: 1 }));
  try {
    return await use(await Promise.all(pools.map((pool) => mysql2Taskrow(pool, { prefix }))));
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }
}

for (const target of targets()) {
  describe(`${label(target)} · mysql2 · migrations`, () => {
    const ref = useReference(target.url);

    it('a fresh database migrated by four processes at once gets the baseline once and each procedure created once: the schema of one migrate()', async () => {
      const { probe, reference, prefixes } = ref();
      const prefix = `${freshName('f')}_`;
      prefixes.push(prefix);
      const results = await withProcesses(target.url, prefix, 4, (trs) => Promise.all(trs.map((tr) => tr.migrate())));
      expect(results.map((r) => r.version)).toEqual(Array(4).fill(VERSIONS.at(-1)));
      expect([...new Set(results.flatMap((r) => r.applied))].sort()).toEqual(VERSIONS);
      expect(results.flatMap((r) => r.routines.refused)).toEqual([]);
      const created = results.flatMap((r) => [...r.routines.created, ...r.routines.replaced]).sort();
      expect(created).toEqual(await proceduresOf(probe, reference).then((names) => names.map((n) => `${prefix}${n}`)));
      expect(created.length).toBe(5);
      expect(await versionsOf(probe, prefix)).toEqual(VERSIONS);
      expect(await schemaOf(probe, prefix)).toEqual(await schemaOf(probe, reference));
    });

    it('a second migrate() creates nothing; a procedure of other text is replaced and a missing one created, the rest left alone', async () => {
      const { probe, reference, prefixes } = ref();
      const prefix = `${freshName('c')}_`;
      prefixes.push(prefix);
      await withProcesses(target.url, prefix, 1, async ([tr]) => {
        await tr!.migrate();
        const again = await tr!.migrate();
        expect(again.applied).toEqual([]);
        expect([again.routines.created, again.routines.replaced, again.routines.unchanged.length]).toEqual([[], [], 5]);
        // An older build's text (another hash in its comment), and one dropped by hand.
        await probe.query(`ALTER PROCEDURE \`${prefix}claim_jobs\` COMMENT 'taskrow 0123456789abcdef: an older claim'`);
        await probe.query(`DROP PROCEDURE \`${prefix}enqueue_jobs\``);
        // A procedure an earlier build installed and this one no longer calls, and one of the same kind of name taskrow did not install.
        await probe.query(`CREATE PROCEDURE \`${prefix}complete_jobs\`() COMMENT 'taskrow 0123456789abcdef: complete a batch' BEGIN END`);
        await probe.query(`CREATE PROCEDURE \`${prefix}ring_sleepers\`() COMMENT 'the application''s own' BEGIN END`);
        const third = await tr!.migrate();
        expect([third.routines.created, third.routines.replaced, third.routines.unchanged.length, third.routines.dropped]).toEqual([
          [`${prefix}enqueue_jobs`],
          [`${prefix}claim_jobs`],
          3,
          [`${prefix}complete_jobs`],
        ]);
        expect(await proceduresOf(probe, prefix)).toContain('ring_sleepers');
        await probe.query(`DROP PROCEDURE \`${prefix}ring_sleepers\``);
        expect(await schemaOf(probe, prefix)).toEqual(await schemaOf(probe, reference));
      });
    });
  });

  describe(`${label(target)} · mysql2 · migrations without CREATE ROUTINE`, () => {
    const ref = useReference(target.url);

    it('a user that may not create procedures migrates the tables, is told which procedures were refused, and enqueues in a transaction; once granted, migrate() creates them', async () => {
      const { probe, reference, prefixes } = ref();
      const prefix = `${freshName('n')}_`;
      prefixes.push(prefix);
      const user = `tr_${freshName('u')}`.slice(0, 32);
      const db = new URL(target.url).pathname.slice(1);
      await probe.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'pw'`);
      await probe.query(`GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, INDEX, DROP, PROCESS ON *.* TO '${user}'@'%'`);
      const url = new URL(target.url);
      [url.username, url.password] = [user, 'pw'];
      try {
        await withProcesses(url.toString(), prefix, 1, async ([tr]) => {
          const res = await tr!.migrate();
          expect(res.applied).toEqual(VERSIONS);
          expect(res.routines.refused.map((r) => r.name).sort()).toEqual((await proceduresOf(probe, reference)).map((n) => `${prefix}${n}`));
          expect(await proceduresOf(probe, prefix)).toEqual([]);
          const q = tr!.queue('q');
          const ids = [(await q.enqueue(1)).id, (await q.enqueue(2)).id];
          expect((await probe.query<{ id: number }>(`SELECT id FROM \`${db}\`.\`${prefix}queue_jobs\` ORDER BY id`)).map((r) => Number(r.id))).toEqual(ids);
        });
        await probe.query(`GRANT CREATE ROUTINE, ALTER ROUTINE, EXECUTE ON *.* TO '${user}'@'%'`);
        await withProcesses(url.toString(), prefix, 1, async ([tr]) => {
          const res = await tr!.migrate();
          expect([res.applied, res.routines.refused, res.routines.created.length]).toEqual([[], [], 5]);
        });
        expect(await schemaOf(probe, prefix)).toEqual(await schemaOf(probe, reference));
      } finally {
        await probe.query(`DROP USER '${user}'@'%'`);
      }
    });
  });

  describe(`${label(target)} · knex · migrations`, () => {
    const ref = useReference(target.url);
    const prefix = `${freshName('k')}_`;
    const config = (): Knex.MigratorConfig => ({ migrationSource: taskrowMigrations({ prefix }), tableName: `${prefix}knex_migrations` });
    const knexTables = ['knex_migrations', 'knex_migrations_lock'];
    let db: Knex;
    beforeAll(() => {
      ref().prefixes.push(prefix);
      db = knexFor(target.url, 2);
    });
    afterAll(() => db?.destroy());

    it("knex.migrate.latest() creates exactly the tables core's migrate() creates", async () => {
      const { probe, reference } = ref();
      const [, log] = (await db.migrate.latest(config())) as [number, string[]];
      expect(log).toEqual(MIGRATIONS.map((m) => `${prefix}${String(m.version).padStart(4, '0')}_${m.name}`));
      const expected = await tablesOf(probe, reference);
      expect(expected.size).toBeGreaterThan(1);
      expect(await tablesOf(probe, prefix, knexTables)).toEqual(expected);
      expect(await versionsOf(probe, prefix)).toEqual(VERSIONS);
    });

    it('leaves nothing for migrate() to apply, and a second latest() runs nothing', async () => {
      const tr = await knexTaskrow(db, { prefix });
      expect((await tr.migrate()).applied).toEqual([]);
      const [, log] = (await db.migrate.latest(config())) as [number, string[]];
      expect(log).toEqual([]);
    });

    it("keeps taskrow's tables and rows through a Knex rollback, and re-applies cleanly", async () => {
      const { probe, reference } = ref();
      const tr = await knexTaskrow(db, { prefix });
      const ns = freshName('ns');
      await tr.dones(ns).mark(['kept']);
      await db.migrate.rollback(config(), true);
      expect(await tr.dones(ns).isDone('kept')).toBe(true);
      await db.migrate.latest(config());
      expect(await tablesOf(probe, prefix, knexTables)).toEqual(await tablesOf(probe, reference));
      expect(await tr.dones(ns).areDone(['kept', 'other'])).toEqual(['kept']);
    });

    it('rejects an invalid prefix with INVALID_NAME before anything runs', () => {
      let err: unknown;
      try {
        taskrowMigrations({ prefix: 'no-dashes!' });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TaskrowError);
      expect((err as TaskrowError).code).toBe('INVALID_NAME');
    });
  });

  describe(`${label(target)} · kysely · migrations`, () => {
    const ref = useReference(target.url);
    const prefix = `${freshName('y')}_`;
    const kyselyTables = ['kysely_migration', 'kysely_migration_lock'];
    let db: Kysely<TaskrowDatabase>;
    const migrator = (): Migrator =>
      new Migrator({
        db,
        provider: taskrowMigrationProvider({ prefix }),
        migrationTableName: `${prefix}kysely_migration`,
        migrationLockTableName: `${prefix}kysely_migration_lock`,
      });
    beforeAll(() => {
      ref().prefixes.push(prefix);
      db = kyselyFor(target.url, 2).db as Kysely<TaskrowDatabase>;
    });
    afterAll(() => db?.destroy());

    it("Migrator.migrateToLatest() creates exactly the tables core's migrate() creates", async () => {
      const { probe, reference } = ref();
      const { error, results } = await migrator().migrateToLatest();
      expect(error).toBeUndefined();
      expect(results?.map((r) => [r.migrationName, r.status])).toEqual(
        MIGRATIONS.map((m) => [`${prefix}${String(m.version).padStart(4, '0')}_${m.name}`, 'Success']),
      );
      const expected = await tablesOf(probe, reference);
      expect(await tablesOf(probe, prefix, kyselyTables)).toEqual(expected);
      expect(await versionsOf(probe, prefix)).toEqual(VERSIONS);
    });

    it('leaves nothing for migrate() to apply, and a second migrateToLatest() runs nothing', async () => {
      const tr = await kyselyTaskrow(db, { prefix });
      expect((await tr.migrate()).applied).toEqual([]);
      const { error, results } = await migrator().migrateToLatest();
      expect(error).toBeUndefined();
      expect(results).toEqual([]);
    });

    it("the exported table types name exactly the columns of core's DDL", async () => {
      const { probe, reference } = ref();
      expect(await columnsOf(probe, reference)).toEqual(TASKROW_COLUMNS);
      const tr = await kyselyTaskrow(db, { prefix: reference });
      const loop = `l${freshName('').toLowerCase().slice(0, 20)}`;
      await tr.createLoop(loop);
      expect((await columnsOf(probe, `${reference}loop_${loop}`))['']).toEqual([...LOOP_TABLE_COLUMNS]);
    });

    it('the table types serve a type-checked query of the rows taskrow wrote', async () => {
      const tr = await kyselyTaskrow(db, { prefix });
      const ns = freshName('ns');
      await tr.dones(ns).mark(['a', 'b']);
      // The types are written for the default prefix; a query under another prefix names its tables explicitly.
      const typed = db as unknown as Kysely<TaskrowDatabase<'p_'>>;
      const nsTable = `${prefix}dones_ns` as 'p_dones_ns';
      const donesTable = `${prefix}dones` as 'p_dones';
      const rows = await typed
        .selectFrom(donesTable)
        .innerJoin(nsTable, (j) => j.onRef(`${donesTable}.gen`, '=', `${nsTable}.gen`))
        .select([`${donesTable}.k`, `${nsTable}.name`])
        .where(`${nsTable}.name`, '=', ns)
        .execute();
      expect(rows.map((r) => Buffer.from(r.k).toString('utf8')).sort()).toEqual(['a', 'b']);
      expect(rows.every((r) => r.name === ns)).toBe(true);
    });
  });
}
