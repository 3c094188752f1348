import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createTaskrow, type Job, type QueueWorker } from '@taskrow/core';
import { mysql2Client, type Mysql2Connection } from '@taskrow/mysql2';
import { counting } from '../../../src/counting.js';
import { openMigratedPool, until, useMigratedPool } from '../../../src/setup.js';
import { label, targets } from '../../../src/targets.js';

// The local hand-off (core README, "Worker"): an enqueue whose process has a napping worker of the
// queue leases its jobs to that worker in the enqueue's own statement, when a claim would take them
// now; the worker runs them without a claim.

/** The enqueue that leases its jobs to a napping worker of its own instance. */
const LOCAL_HAND = /enqueue_jobs_leased/;

/** A claim as the server receives it: its locking read in a transaction, or its CALL. */
const CLAIMS = /ORDER BY `ready_priority`.*SKIP LOCKED|^CALL `[^`]*claim_jobs`/s;

/** Resolves after `ms` on the local clock: an observation window, not a wait for the database. */
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts `w` and resolves once its first claim found nothing: it naps from then on. */
async function napping<P>(start: () => QueueWorker<P>): Promise<QueueWorker<P>> {
  const w = start();
  await once(w, 'idle');
  return w;
}

for (const target of targets()) {
  describe(`${label(target)} · mysql2 · local hand-off`, () => {
    const prefix = `lh${process.pid.toString(36)}_`;
    const db = useMigratedPool(target, { prefix, connectionLimit: 8 });

    /** The phase of each job of `ids` (0 ready, 1 delayed, 2 running), in order. */
    const phases = async (ids: readonly number[]): Promise<number[]> => {
      const rows = await db.probe.query<{ id: number; phase: number }>(
        `SELECT id, phase FROM \`${prefix}queue_jobs\` WHERE id IN (${ids.map(() => '?').join(', ')}) ORDER BY id`,
        [...ids],
      );
      return rows.map((r) => Number(r.phase));
    };

    /** A taskrow over the pool whose statements are counted, its CALLs and its sessions' statements included. */
    const counted = async () => {
      const c = counting(mysql2Client(db.pool), { calls: true });
      return { ...c, tr: await createTaskrow<Mysql2Connection>({ client: c.client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } }) };
    };

    it("an enqueue into a queue whose worker naps in this process leases the jobs to it in its own statement: no claim, attempt 1, the enqueue's ids, each job's own token, no more lease than the database has", async () => {
      const c = await counted();
      const name = `hand${Date.now()}`;
      const seen: { job: Job<number>; leftMs: number; row: { phase: number; token: string; left_us: number }; readMs: number }[] = [];
      const w = await napping(() =>
        c.tr.queue<number>(name).work(
          async (job) => {
            const leftMs = job.leaseLeft();
            const t0 = performance.now();
            const [row] = await db.probe.query<{ phase: number; token: string; left_us: number }>(
              `SELECT phase, CAST(token AS CHAR) AS token, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), due_at) AS left_us FROM \`${prefix}queue_jobs\` WHERE id = ?`,
              [job.id],
            );
            seen.push({ job, leftMs, row: row!, readMs: performance.now() - t0 });
          },
          { concurrency: 10, lease: 20_000, pollInterval: 30_000 },
        ),
      );
      try {
        const before = c.matching(CLAIMS);
        const out = await c.tr.queue<number>(name).enqueueMany(Array.from({ length: 5 }, (_, i) => ({ payload: i })));
        await until('5 completions', () => w.counts.completed === 5, 10);
        expect(c.matching(CLAIMS) - before).toBe(0);
        expect(seen.map((s) => s.job.payload).sort()).toEqual([0, 1, 2, 3, 4]);
        expect(seen.map((s) => s.job.id).sort((a, b) => a - b)).toEqual(out.map((e) => e.id));
        for (const s of seen) {
          expect(s.job.attempt).toBe(1);
          expect(Number(s.row.phase)).toBe(2);
          expect(s.row.token).toBe(String(s.job.token));
          // The local lease ends before the database's: what the handler saw left, less the read's own time.
          expect(s.leftMs).toBeLessThanOrEqual(Number(s.row.left_us) / 1000 + s.readMs);
          expect(s.leftMs).toBeGreaterThan(10_000);
        }
        expect(new Set(seen.map((s) => s.job.token)).size).toBe(5);
        expect(await db.probe.query(`SELECT id FROM \`${prefix}queue_jobs\` WHERE queue = ?`, [name])).toEqual([]);
      } finally {
        await w.stop();
      }
    });

    it('a job waiting ready is not passed: a new job enqueued behind it is made ready, and the rung worker claims both in order', async () => {
      const name = `order${Date.now()}`;
      const order: string[] = [];
      const w = await napping(() => db.tr.queue<string>(name).work(async (job) => void order.push(job.payload), { concurrency: 1, pollInterval: 30_000 }));
      try {
        // Inside an application transaction: nothing in this process rings, and the napping worker sleeps on.
        const conn = await db.pool.getConnection();
        try {
          await conn.beginTransaction();
          await db.tr.in(conn).queue(name).enqueue('first');
          await conn.commit();
        } finally {
          conn.release();
        }
        await db.tr.queue<string>(name).enqueue('second');
        await until('both jobs ran', () => order.length === 2, 10);
        expect(order).toEqual(['first', 'second']);
      } finally {
        await w.stop();
      }
    });

    it("a paused queue's new jobs stay ready; once resumed they are claimed and run once", async () => {
      const name = `paused${Date.now()}`;
      const q = db.tr.queue<number>(name);
      const ran: number[] = [];
      const w = await napping(() => q.work(async (job) => void ran.push(job.attempt), { concurrency: 5, pollInterval: 200 }));
      try {
        await q.pause();
        const out = await q.enqueueMany([{ payload: 1 }, { payload: 2 }]);
        expect(await phases(out.map((e) => e.id))).toEqual([0, 0]);
        await q.resume();
        await until('both jobs ran', () => ran.length === 2, 10);
        expect(ran).toEqual([1, 1]);
      } finally {
        await w.stop();
      }
    });

    it('delayed and keyed jobs are not leased: they start delayed, as without a worker', async () => {
      const name = `later${Date.now()}`;
      const q = db.tr.queue<number>(name);
      const w = await napping(() => q.work(async () => undefined, { concurrency: 5, pollInterval: 30_000 }));
      try {
        const [delayed] = await q.enqueueMany([{ payload: 1, delay: 3_600_000 }]);
        const [keyed] = await q.enqueueMany([{ payload: 2, concurrencyKey: 'k' }]);
        expect(await phases([delayed!.id, keyed!.id])).toEqual([1, 1]);
      } finally {
        await w.stop();
      }
    });

    it('a worker is leased no more jobs than it has free handler slots: the rest stay ready for claims', async () => {
      const c = await counted();
      const name = `room${Date.now()}`;
      const q = c.tr.queue<number>(name);
      let open: () => void = () => undefined;
      const gate = new Promise<void>((r) => (open = r));
      const ran: number[] = [];
      const w = await napping(() => q.work(async (job) => (await gate, void ran.push(job.payload)), { concurrency: 2, pollInterval: 30_000 }));
      try {
        const [first] = await q.enqueueMany([{ payload: 0 }]);
        await until('the first job running', async () => (await phases([first!.id]))[0] === 2, 10);
        // One slot is free: an enqueue of three jobs (more than the room) leases none of them; the
        // worker's claims take them as slots free.
        const leasedBefore = c.matching(LOCAL_HAND);
        await q.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
        expect(c.matching(LOCAL_HAND) - leasedBefore).toBe(0);
        open();
        await until('4 jobs ran', () => ran.length === 4, 10);
        expect([...ran].sort()).toEqual([0, 1, 2, 3]);
      } finally {
        open();
        await w.stop();
      }
    });

    it('a worker with a group filter is not leased jobs: the enqueue rings it and its claim takes the job', async () => {
      const c = await counted();
      const name = `grp${Date.now()}`;
      const ran: string[] = [];
      const w = await napping(() => c.tr.queue<string>(name).work(async (job) => void ran.push(job.payload), { group: 'g', pollInterval: 30_000 }));
      try {
        const before = c.matching(CLAIMS);
        const [one] = await db.tr.queue<string>(name).enqueueMany([{ payload: 'x', group: 'g' }]);
        await until('the job ran', () => ran.length === 1, 10);
        // Taken by a claim (a group's claim is a transaction of several reads), not leased by the enqueue.
        expect(c.matching(CLAIMS) - before).toBeGreaterThan(0);
        expect(one!.id).toBeGreaterThan(0);
      } finally {
        await w.stop();
      }
    });
  });
}

// A worker reading another database in the same process is never leased a job of this one.
describe('local hand-off · two databases, one process, same tables', () => {
  it('an enqueue into the first database leaves its job ready although a worker of the second naps on the same queue name', async () => {
    const pair = targets().slice(0, 2);
    expect(pair.length).toBe(2);
    const prefix = `lt${process.pid.toString(36)}_`;
    const name = `two${Date.now()}`;
    const dbs = await Promise.all(pair.map((t) => openMigratedPool(t, { prefix })));
    const trs = dbs.map((d) => d.tr);
    const ran: unknown[] = [];
    const second = await napping(() => trs[1]!.queue(name).work(async (job) => void ran.push(job.payload), { pollInterval: 30_000 }));
    try {
      const [one] = await trs[0]!.queue(name).enqueueMany([{ payload: 'x' }]);
      const [row] = await dbs[0]!.probe.query<{ phase: number }>(`SELECT phase FROM \`${prefix}queue_jobs\` WHERE id = ?`, [one!.id]);
      expect(Number(row!.phase)).toBe(0);
      // An observation window, the thing under test: the second database's worker must not run the job in it, and no event tells that it did not.
      await pause(200);
      expect(ran).toEqual([]);
    } finally {
      await second.stop();
      for (const d of dbs) await d.end();
    }
  });
});
