import * as mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import { beforeAll, describe, expect, it } from 'vitest';
import type { QueueWorker, Taskrow } from '@taskrow/core';
import { taskrow as drizzleTaskrow } from '@taskrow/drizzle';
import { taskrow as mariadbTaskrow } from '@taskrow/mariadb';
import { taskrow as mysql2Taskrow } from '@taskrow/mysql2';
import type { ServerTarget } from '@taskrow/servers';
import { drizzleFor } from '../../src/harnesses/drizzle.js';
import { mariadbConfig } from '../../src/harnesses/mariadb.js';
import { until, useMigratedPool, type OwnProbe } from '../../src/setup.js';
import { label, targets } from '../../src/targets.js';

/** Resolves after `ms` on the local clock: time that passes on purpose, not a wait for the database. */
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * A taskrow over a pool of `size` connections the application also uses: `app` runs one of the
 * application's own statements on the pool (autocommit), `acquires` counts the pool's lendings
 * (its `acquire` event: taskrow's and the application's), `threads` the pool's connection ids.
 */
interface Pooled {
  tr: Taskrow<unknown>;
  app(sql: string, params?: unknown[]): Promise<unknown>;
  acquires(): number;
  threads(): number[];
  end(): Promise<void>;
}

const pools: Record<string, (target: ServerTarget, prefix: string, size: number) => Promise<Pooled>> = {
  async mysql2(target, prefix, size) {
    const pool = mysql.createPool({ uri: target.url, connectionLimit: size });
    let acquires = 0;
    const threads: number[] = [];
    pool.on('acquire', () => void (acquires += 1));
    pool.on('connection', (c) => void threads.push((c as unknown as { threadId: number }).threadId));
    const tr = (await mysql2Taskrow(pool, { prefix })) as Taskrow<unknown>;
    return { tr, app: async (sql, params) => (await pool.query(sql, params))[0], acquires: () => acquires, threads: () => threads, end: () => pool.end() };
  },
  async mariadb(target, prefix, size) {
    const pool = mariadb.createPool(`${mariadbConfig(target)}&connectionLimit=${size}`);
    let acquires = 0;
    const threads: number[] = [];
    pool.on('acquire', () => void (acquires += 1));
    pool.on('connection', (c) => void threads.push(c.threadId!));
    const tr = (await mariadbTaskrow(pool, { prefix })) as Taskrow<unknown>;
    return { tr, app: (sql, params) => pool.query(sql, params), acquires: () => acquires, threads: () => threads, end: () => pool.end() };
  },
  async drizzle(target, prefix, size) {
    const db = drizzleFor(target.url, size);
    const pool = db.$client;
    let acquires = 0;
    const threads: number[] = [];
    pool.on('acquire', () => void (acquires += 1));
    pool.on('connection', (c) => void threads.push(c.threadId));
    const tr = (await drizzleTaskrow(db, { prefix })) as Taskrow<unknown>;
    return {
      tr,
      app: async (sql, params) => (await pool.promise().query(sql, params))[0],
      acquires: () => acquires,
      threads: () => threads,
      end: () => pool.promise().end(),
    };
  },
};

// A worker on a mysql2 or mariadb Pool (or a Drizzle database over a mysql2 Pool) keeps one connection between its claims and completions
// (COMMIT AND CHAIN: no BEGIN or isolation statement each time). It MUST give it back the moment
// the application waits for a connection, and never inside a transaction.
for (const target of targets()) {
  for (const adapter of Object.keys(pools)) {
    describe(`${label(target)} · ${adapter} · kept connection`, () => {
      const prefix = `kc${process.pid.toString(36)}${adapter.slice(0, 2)}_`;
      const effects = `${prefix}effects`;
      // The prefix migrated, the probe, and the clean-up; each case opens the pool under test itself
      // (its size, its lendings and connections counted from its first, its end() timed).
      const db = useMigratedPool(target, { prefix, connectionLimit: 1 });
      let probe: OwnProbe;
      beforeAll(async () => {
        probe = db.probe;
        await probe.query(`CREATE TABLE IF NOT EXISTS \`${effects}\` (job BIGINT NOT NULL, run VARCHAR(40) NOT NULL, PRIMARY KEY (run, job))`);
      });

      /** The effects table's job ids of `run`, as the database holds them, counted per job. */
      const effectCounts = async (run: string): Promise<Map<number, number>> => {
        const seen = new Map<number, number>();
        for (const r of await probe.query<{ job: unknown }>(`SELECT job FROM \`${effects}\` WHERE run = ?`, [run]))
          seen.set(Number(r.job), (seen.get(Number(r.job)) ?? 0) + 1);
        return seen;
      };

      it('a pool of one connection: handlers that use the pool get it, and every job runs once', async () => {
        const p = await pools[adapter]!(target, prefix, 1);
        const run = `one${Date.now()}`;
        const started: number[] = [];
        let w: QueueWorker<number> | undefined;
        try {
          await p.tr.migrate();
          const q = p.tr.queue<number>(run);
          const ids = (await q.enqueueMany(Array.from({ length: 60 }, (_, i) => ({ payload: i })))).map((e) => e.id);
          w = q.work(
            async (job) => {
              started.push(job.id);
              await p.app(`INSERT INTO \`${effects}\` (job, run) VALUES (?, ?)`, [job.id, run]);
            },
            { concurrency: 1, batchSize: 1, pollInterval: 50 },
          );
          await until('60 completions', () => w!.counts.completed === 60, 20);
          const seen = await effectCounts(run);
          expect([...seen.keys()].sort((a, b) => a - b)).toEqual(ids);
          expect([...seen.values()].every((n) => n === 1)).toBe(true);
          expect(new Set(started).size).toBe(60);
          expect(started.length).toBe(60);
        } finally {
          await w?.stop();
          await p.end();
        }
      }, 40_000);

      it('4 workers over a pool of one connection each run jobs: a worker waiting for the pool before another took it is not left waiting', async () => {
        const p = await pools[adapter]!(target, prefix, 1);
        const workers: QueueWorker<number>[] = [];
        try {
          await p.tr.migrate();
          const q = p.tr.queue<number>(`four${Date.now()}`);
          await q.enqueueMany(Array.from({ length: 200 }, (_, i) => ({ payload: i })));
          // Each handler holds its job 2 ms (work, not a wait for the database), so the workers'
          // claims and completions interleave on the one connection.
          for (let i = 0; i < 4; i++) workers.push(q.work(() => pause(2), { concurrency: 1, batchSize: 1, pollInterval: 50 }));
          await until('200 completions', () => workers.reduce((n, w) => n + w.counts.completed, 0) === 200, 30);
          const each = workers.map((w) => w.counts.completed);
          // Left waiting, a worker completes nothing while the others pass the connection between them.
          expect(Math.min(...each)).toBeGreaterThan(10);
        } finally {
          await Promise.all(workers.map((w) => w.stop()));
          await p.end();
        }
      }, 40_000);

      it('a worker draining 300 jobs takes a connection of the pool a few times, not once per transaction', async () => {
        const p = await pools[adapter]!(target, prefix, 4);
        let w: QueueWorker<number> | undefined;
        try {
          await p.tr.migrate();
          // Finished jobs kept: the completions are transactions (a plain one rides in the claim's
          // CALL, a statement lent a connection of its own).
          const q = p.tr.queue<number>(`few${Date.now()}`, { keepFinishedFor: 60_000 });
          await q.enqueueMany(Array.from({ length: 300 }, (_, i) => ({ payload: i })));
          const before = p.acquires();
          w = q.work(async () => undefined, { concurrency: 1, batchSize: 1, pollInterval: 50 });
          await until('300 completions', () => w!.counts.completed === 300, 30);
          // Through a connection lent per transaction, 300 one-job claims and completions take at
          // least 300 lendings. A worker alone on its queue claims with the completion of the last
          // job on its kept connection once ten claims' CALLs (statements, lent a connection
          // each) found the claim lock free, and calls again once a second; its own autocommit
          // statements (head reads) take a few more.
          expect(p.acquires() - before).toBeLessThan(60);
        } finally {
          await w?.stop();
          await p.end();
        }
      }, 40_000);

      it('the kept connection goes back to the application with no transaction open', async () => {
        const p = await pools[adapter]!(target, prefix, 1);
        const run = `back${Date.now()}`;
        let w: QueueWorker<number> | undefined;
        try {
          await p.tr.migrate();
          const q = p.tr.queue<number>(run, { keepFinishedFor: 60_000 }); // completions as transactions, as above
          await q.enqueueMany(Array.from({ length: 20 }, (_, i) => ({ payload: i })));
          w = q.work(async () => undefined, { concurrency: 1, batchSize: 1, pollInterval: 50 });
          await until('20 completions', () => w!.counts.completed === 20, 20);
          // The worker now keeps the pool's only connection in a chained transaction. The
          // application's autocommit INSERT on the pool MUST commit on its own: another
          // connection sees it at once. (mysql2's release leaves a transaction open; `mariadb`'s
          // rolls it back itself.)
          for (let i = 1; i <= 5; i++) {
            await p.app(`INSERT INTO \`${effects}\` (job, run) VALUES (?, ?)`, [i, run]);
            expect((await effectCounts(run)).get(i)).toBe(1);
            // Time between the application's statements on purpose: the idle worker's polls (50 ms apart
            // at most) take the connection back in it, and no event marks that on every driver's pool.
            await pause(100);
          }
          await w.stop();
          w = undefined;
          await p.app(`INSERT INTO \`${effects}\` (job, run) VALUES (?, ?)`, [99, run]);
          expect((await effectCounts(run)).get(99)).toBe(1);
        } finally {
          await w?.stop();
          await p.end();
        }
      }, 40_000);

      /** The jobs of queue `name` as the database holds them: payload -> how many rows. */
      const jobCounts = async (name: string): Promise<Map<number, number>> => {
        const seen = new Map<number, number>();
        for (const r of await probe.query<{ payload: unknown }>(`SELECT payload FROM \`${prefix}queue_jobs\` WHERE queue = ?`, [name])) {
          const n = Number(JSON.parse(String(r.payload)));
          seen.set(n, (seen.get(n) ?? 0) + 1);
        }
        return seen;
      };

      it('batches enqueued one at a time take a connection of the pool a few times, not once per batch', async () => {
        const p = await pools[adapter]!(target, prefix, 4);
        try {
          await p.tr.migrate();
          const q = p.tr.queue<number>(`enq${Date.now()}`);
          // Batches of more than 32 jobs run their transaction in the client (a single job and a
          // small batch are one CALL, lent like any statement).
          const batch = (i: number): { payload: number }[] => Array.from({ length: 33 }, () => ({ payload: i }));
          await q.enqueueMany(batch(-1));
          const before = p.acquires();
          for (let i = 0; i < 100; i++) await q.enqueueMany(batch(i));
          // Lent per transaction, 100 batches take at least 100 lendings.
          expect(p.acquires() - before).toBeLessThan(10);
        } finally {
          await p.end();
        }
      });

      it("a pool of one connection: the application's statements between enqueues get it, outside any transaction, and each enqueue is committed when it returns", async () => {
        const p = await pools[adapter]!(target, prefix, 1);
        const run = `penq${Date.now()}`;
        try {
          await p.tr.migrate();
          const q = p.tr.queue<number>(run);
          for (let i = 1; i <= 20; i++) {
            await q.enqueue(i);
            expect((await jobCounts(run)).get(i)).toBe(1); // committed: another connection sees it
            await p.app(`INSERT INTO \`${effects}\` (job, run) VALUES (?, ?)`, [i, run]);
            expect((await effectCounts(run)).get(i)).toBe(1); // the application's autocommit INSERT committed on its own
          }
          const jobs = await jobCounts(run);
          expect([...jobs.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
          expect([...jobs.values()].every((n) => n === 1)).toBe(true);
        } finally {
          await p.end();
        }
      });

      it('a pool ended right after an enqueue ends within a second (the kept connection goes back when unused)', async () => {
        const p = await pools[adapter]!(target, prefix, 2);
        await p.tr.migrate();
        await p.tr.queue<number>(`pend${Date.now()}`).enqueue(1);
        const t0 = performance.now();
        await p.end();
        expect(performance.now() - t0).toBeLessThan(1000);
      });

      it("a producer's kept connection killed between enqueues: the next enqueue goes through on another, and every job is there once", async () => {
        const p = await pools[adapter]!(target, prefix, 2);
        const run = `pkill${Date.now()}`;
        try {
          await p.tr.migrate();
          const q = p.tr.queue<number>(run);
          const ids: number[] = [];
          for (let round = 0; round < 5; round++) {
            for (let i = 0; i < 10; i++) ids.push((await q.enqueue(round * 10 + i)).id);
            for (const id of p.threads()) await probe.query(`KILL ${Number(id)}`).catch(() => undefined); // some are gone already
          }
          const jobs = await jobCounts(run);
          expect([...jobs.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
          expect([...jobs.values()].every((n) => n === 1)).toBe(true);
          expect(new Set(ids).size).toBe(50);
        } finally {
          await p.end();
        }
      });

      it('a kept connection killed between transactions: the worker goes on with another, and every job runs once', async () => {
        const p = await pools[adapter]!(target, prefix, 2);
        const run = `kill${Date.now()}`;
        const errors: unknown[] = [];
        let w: QueueWorker<number> | undefined;
        try {
          await p.tr.migrate();
          const q = p.tr.queue<number>(run);
          const ids: number[] = [];
          w = q.work(async (job) => void (await p.app(`INSERT INTO \`${effects}\` (job, run) VALUES (?, ?)`, [job.id, run])), {
            concurrency: 1,
            batchSize: 1,
            pollInterval: 50,
            onError: (err) => void errors.push(err),
          });
          for (let round = 0; round < 5; round++) {
            ids.push(...(await q.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ payload: i })))).map((e) => e.id));
            await until(`${ids.length} completions`, () => w!.counts.completed === ids.length, 20);
            // Every connection the pool opened so far: the kept one is among them.
            for (const id of p.threads()) await probe.query(`KILL ${Number(id)}`).catch(() => undefined); // some are gone already
          }
          ids.push(...(await q.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ payload: i })))).map((e) => e.id));
          await until(`${ids.length} completions`, () => w!.counts.completed === ids.length, 20);
          const seen = await effectCounts(run);
          expect([...seen.keys()].sort((a, b) => a - b)).toEqual(ids);
          expect([...seen.values()].every((n) => n === 1)).toBe(true);
          expect(w.counts.lost).toBe(0);
        } finally {
          await w?.stop();
          await p.end();
        }
      }, 60_000);
    });
  }
}
