import type { Knex } from 'knex';
import { Migrator, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, migrationSteps, TaskrowError, type Job, type Taskrow } from '@taskrow/core';
import { freshName } from '@taskrow/core/conformance';
import { taskrow as knexTaskrow, taskrowMigrations } from '@taskrow/knex';
import {
  LOOP_TABLE_COLUMNS,
  TASKROW_COLUMNS,
  taskrow as kyselyTaskrow,
  taskrowMigrationProvider,
  type TaskrowDatabase,
} from '@taskrow/kysely';
import { taskrow as mysql2Taskrow } from '@taskrow/mysql2';
import mysql from 'mysql2/promise';
import { knexFor } from '../../src/harnesses/knex.js';
import { kyselyFor } from '../../src/harnesses/kysely.js';
import { columnsOf, schemaOf, versionsOf } from '../../src/schema/inspect.js';
import { useReference } from '../../src/schema/reference.js';
import { label, targets } from '../../src/targets.js';

const VERSIONS = MIGRATIONS.map((m) => m.version);

/** Payload -> id of the jobs of `prefix`. */
async function idsByPayload(probe: { query<R>(sql: string): Promise<R[]> }, prefix: string): Promise<Record<string, number>> {
  const rows = await probe.query<{ id: number; payload: string }>(`SELECT id, payload FROM \`${prefix}queue_jobs\``);
  return Object.fromEntries(rows.map((r) => [JSON.parse(String(r.payload)), Number(r.id)]));
}

/**
 * Four processes migrate `prefix` at once; each MUST end at the latest version, one of them having
 * applied `version`. Runs `use` with their clients, then ends their pools.
 */
async function upgradeFromFour(url: string, prefix: string, version: number, use: (trs: Taskrow[]) => Promise<void>): Promise<void> {
  const pools = Array.from({ length: 4 }, () => mysql.createPool({ uri: url, connectionLimit: 1 }));
  try {
    const trs = await Promise.all(pools.map((pool) => mysql2Taskrow(pool, { prefix })));
    const results = await Promise.all(trs.map((tr) => tr.migrate()));
    expect(results.map((r) => r.version)).toEqual(Array(4).fill(VERSIONS.at(-1)));
    expect(results.some((r) => r.applied.includes(version))).toBe(true);
    await use(trs);
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }
}

for (const target of targets()) {
  describe(`${label(target)} · mysql2 · migrations`, () => {
    const ref = useReference(target.url);

    it('upgrades a version-6 schema holding a running job from four processes at once: the job keeps its token', async () => {
      const { probe, reference, prefixes } = ref();
      const prefix = `${freshName('u')}_`;
      prefixes.push(prefix);
      for (const step of migrationSteps(prefix).filter((s) => s.version <= 6)) for (const sql of step.statements) await probe.query(sql);
      await probe.query(
        `INSERT INTO \`${prefix}queue_jobs\` (queue, phase, due_at, run_at, attempt, max_attempts, lease, payload, created_at)
         VALUES ('q', 2, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, UTC_TIMESTAMP(6), 1, 5, 987654321, '"old"', UTC_TIMESTAMP(6))`,
      );
      const [{ id }] = await probe.query<{ id: number }>(`SELECT id FROM \`${prefix}queue_jobs\``) as [{ id: number }];
      await upgradeFromFour(target.url, prefix, 7, async (trs) => {
        expect(await versionsOf(probe, prefix)).toEqual(VERSIONS);
        expect(await schemaOf(probe, prefix)).toEqual(await schemaOf(probe, reference));
        await trs[0]!.queue('q').complete({ id: Number(id), queue: 'q', token: 987654321 });
        expect(await probe.query(`SELECT id FROM \`${prefix}queue_jobs\``)).toEqual([]);
      });
    });

    it('upgrades a version-26 schema holding live jobs with dedup keys from four processes at once: each key still admits one live job', async () => {
      const { probe, reference, prefixes } = ref();
      const prefix = `${freshName('u')}_`;
      prefixes.push(prefix);
      for (const step of migrationSteps(prefix).filter((s) => s.version <= 26)) for (const sql of step.statements) await probe.query(sql);
      const row = (phase: number, key: string | null, payload: string): Promise<unknown> =>
        probe.query(
          `INSERT INTO \`${prefix}queue_jobs\` (queue, phase, due_at, run_at, attempt, max_attempts, token, dedup_k, payload, created_at)
           VALUES ('q', ?, UTC_TIMESTAMP(6) + INTERVAL 1 HOUR, UTC_TIMESTAMP(6), 1, 5, 42, ?, ?, UTC_TIMESTAMP(6))`,
          [phase, key, JSON.stringify(payload)],
        );
      await row(0, 'ready-key', 'ready');
      await row(2, 'running-key', 'running');
      await row(3, null, 'done');
      const ids = await idsByPayload(probe, prefix);
      await upgradeFromFour(target.url, prefix, 27, async (trs) => {
        expect(await schemaOf(probe, prefix)).toEqual(await schemaOf(probe, reference));
        const q = trs[1]!.queue('q');
        expect(await q.enqueue('again', { dedupKey: 'ready-key' })).toEqual({ id: ids['ready'], deduplicated: true });
        expect(await q.enqueue('again', { dedupKey: 'running-key' })).toEqual({ id: ids['running'], deduplicated: true });
        expect((await q.enqueue('new', { dedupKey: 'done-key' })).deduplicated).toBe(false);
      });
    });

    it('upgrades a version-30 schema holding keyed jobs ready, running, blocked and due from four processes at once: every key keeps its limit and admits its blocked jobs first enqueued first', async () => {
      const { probe, reference, prefixes } = ref();
      const prefix = `${freshName('u')}_`;
      prefixes.push(prefix);
      for (const step of migrationSteps(prefix).filter((s) => s.version <= 30)) for (const sql of step.statements) await probe.query(sql);
      // phase 0 ready, 1 delayed (due an hour ago), 2 running (leased for an hour), 5 blocked
      const row = (phase: number, key: string, payload: string): Promise<unknown> =>
        probe.query(
          `INSERT INTO \`${prefix}queue_jobs\` (queue, phase, due_at, run_at, attempt, max_attempts, token, payload, conc_key, created_at)
           VALUES ('q', ?, UTC_TIMESTAMP(6) + INTERVAL IF(? = 2, 1, -1) HOUR, UTC_TIMESTAMP(6) - INTERVAL 1 HOUR, IF(? = 2, 1, 0), 5, 42, ?, ?, UTC_TIMESTAMP(6))`,
          [phase, phase, phase, JSON.stringify(payload), key],
        );
      await row(2, 'k1', 'k1-running');
      await row(5, 'k1', 'k1-blocked');
      await row(0, 'k2', 'k2-ready');
      await row(5, 'k2', 'k2-blocked');
      await row(1, 'k3', 'k3-due');
      const ids = await idsByPayload(probe, prefix);
      await upgradeFromFour(target.url, prefix, 31, async (trs) => {
        expect(await schemaOf(probe, prefix)).toEqual(await schemaOf(probe, reference));
        const q = trs[2]!.queue<string>('q');
        const taken: Job<string>[] = [];
        const claimed = async (): Promise<string[]> => {
          const jobs = await q.claim({ limit: 10, lease: 60 });
          taken.push(...jobs);
          return jobs.map((j) => j.payload).sort();
        };
        expect(await claimed()).toEqual(['k2-ready', 'k3-due']); // k1 runs a job and k2 has one ready: their blocked jobs wait
        await q.enqueueMany([{ payload: 'k1-new', concurrencyKey: 'k1' }, { payload: 'k2-new', concurrencyKey: 'k2' }]);
        expect(await claimed()).toEqual([]); // the jobs that held k1 and k2 before the upgrade still hold them
        await q.complete({ id: ids['k1-running']!, queue: 'q', token: 42 });
        expect(await claimed()).toEqual(['k1-blocked']); // blocked before the upgrade: admitted before k1-new
        await q.complete(taken.find((j) => j.payload === 'k2-ready')!);
        expect(await claimed()).toEqual(['k2-blocked']);
      });
    });
  });

  describe(`${label(target)} · mysql2 · migrations without CREATE ROUTINE`, () => {
    const ref = useReference(target.url);

    it('a user that may not create procedures migrates all the same (version 17 recorded, no procedure), and its enqueues run in a transaction, once each', async () => {
      const { probe, prefixes } = ref();
      const prefix = `${freshName('n')}_`;
      prefixes.push(prefix);
      const user = `tr_${freshName('u')}`.slice(0, 32);
      const db = new URL(target.url).pathname.slice(1);
      await probe.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'pw'`);
      await probe.query(`GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, INDEX, DROP, PROCESS ON *.* TO '${user}'@'%'`);
      const url = new URL(target.url);
      [url.username, url.password] = [user, 'pw'];
      const pool = mysql.createPool({ uri: url.toString(), connectionLimit: 2 });
      try {
        const tr = await mysql2Taskrow(pool, { prefix });
        const res = await tr.migrate();
        expect(res.applied).toContain(17);
        expect(await versionsOf(probe, prefix)).toEqual(VERSIONS);
        expect([...(await schemaOf(probe, prefix)).keys()].filter((k) => k.startsWith('procedure'))).toEqual([]);
        const q = tr.queue('q');
        const ids = [(await q.enqueue(1)).id, (await q.enqueue(2)).id];
        expect((await probe.query<{ id: number }>(`SELECT id FROM \`${db}\`.\`${prefix}queue_jobs\` ORDER BY id`)).map((r) => Number(r.id))).toEqual(ids);
      } finally {
        await pool.end();
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
      const expected = await schemaOf(probe, reference);
      expect(expected.size).toBeGreaterThan(1);
      expect(await schemaOf(probe, prefix, knexTables)).toEqual(expected);
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
      expect(await schemaOf(probe, prefix, knexTables)).toEqual(await schemaOf(probe, reference));
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
      const expected = await schemaOf(probe, reference);
      expect(await schemaOf(probe, prefix, kyselyTables)).toEqual(expected);
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
