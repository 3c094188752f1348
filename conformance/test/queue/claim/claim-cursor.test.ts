import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Taskrow } from '@taskrow/core';
import { taskrow } from '@taskrow/mysql2';
import { until, useMigratedPool } from '../../../src/setup.js';
import { label, targets } from '../../../src/targets.js';

// Claims of a process read the ready rows from where its last read ended (packages/core/src/queue/
// model/cursor.ts). These cases check that a job made ready behind that place is never left there:
// one made ready by this process is taken by the next claim, one made ready by another process is
// taken by a claim that comes back short or, behind a backlog, within about a second (one claim
// of the fleet reads the queue from its head about once a second).

/** Paces a loop of claims on the local clock, as a consumer's work between them would: time that passes on purpose. */
const pace = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** How often (ms) one claim of the fleet reads a queue from its head (documented: once a second). */
const CURSOR_MS = 1000;

/** Most time (ms) a job made ready behind a backlog by another process may wait: the cursor's 1 s, and slack for a loaded machine. */
const BEHIND_MS = 2500;

/**
 * Resolves once `CURSOR_MS` passed since `headRead` (a `performance.now()` time taken after the
 * process's last claim that read from the head returned). The period runs on the process's own
 * clock and shows nowhere a probe could read it: the time passing is what makes the turn due.
 */
const cursorPeriodOver = (headRead: number): Promise<void> =>
  until('CURSOR_MS since the last read from the head', () => performance.now() - headRead >= CURSOR_MS, 10);

for (const target of targets()) {
  describe(`${label(target)} · mysql2 · claims read from where the last full claim ended`, () => {
    const prefix = `cc${process.pid.toString(36)}_`;
    const db = useMigratedPool(target, { prefix });
    // The other two processes need a client each (a read position of their own): a pool beside the shared one.
    const pools: mysql.Pool[] = [];
    /** This process's taskrow, and another one standing for another process (its own client, its own read position). */
    let here: Taskrow;
    let other: Taskrow;
    /** A third process, for the turns at reading from the head. */
    let third: Taskrow;
    beforeAll(async () => {
      here = db.tr;
      for (let i = 0; i < 2; i++) pools.push(mysql.createPool({ uri: target.url, connectionLimit: 4 }));
      other = await taskrow(pools[0]!, { prefix });
      third = await taskrow(pools[1]!, { prefix });
    });
    afterAll(async () => {
      await Promise.all(pools.map((p) => p.end()));
    });

    /** Enqueues jobs `from` to `to` - 1 (payload: the number), 1,000 per statement (one due time each). */
    const enqueueBacklog = async (name: string, from: number, to: number, priority = 0): Promise<void> => {
      for (let i = from; i < to; i += 1000) {
        await here.queue<number>(name).enqueueMany(Array.from({ length: Math.min(1000, to - i) }, (_, j) => ({ payload: i + j, priority })));
      }
    };
    /** Job 0 first on its own (its due time is before the backlog's), then jobs 1 to `total` - 1. */
    const enqueueFirstAndBacklog = async (name: string, total: number): Promise<void> => {
      await here.queue<number>(name).enqueue(0);
      await enqueueBacklog(name, 1, total);
    };

    it('after a full claim, a job this process enqueues ahead of the backlog (a lower priority number) is taken first by the next claim, through any handle', async () => {
      const name = `ahead${Date.now()}`;
      await enqueueBacklog(name, 0, 30, 5);
      const first = await here.queue<number>(name).claim({ limit: 10, lease: 60_000 });
      expect(first.map((j) => j.payload)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      await here.queue<number>(name).enqueue(-1, { priority: 1 });
      const next = await here.queue<number>(name).claim({ limit: 10, lease: 60_000 });
      expect(next.map((j) => j.payload)).toEqual([-1, 10, 11, 12, 13, 14, 15, 16, 17, 18]);
    });

    it("after a full claim, a blocked job this process admits by raising its key's limit (due before the backlog) is taken first by the next claim", async () => {
      const name = `admit${Date.now()}`;
      const q = here.queue<number>(name);
      await q.enqueue(0, { concurrencyKey: 'k' });
      await q.enqueue(1, { concurrencyKey: 'k' }); // blocked: the key's limit is 1
      await enqueueBacklog(name, 2, 32);
      const first = await q.claim({ limit: 10, lease: 60_000 });
      expect(first.map((j) => j.payload)).toEqual([0, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      await q.setConcurrencyLimit(2, { key: 'k' });
      const next = await q.claim({ limit: 10, lease: 60_000 });
      expect(next.map((j) => j.payload)).toEqual([1, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    });

    it("after a full claim, a blocked job a worker's completion admits (due before the backlog) is taken first by the next claim of the process", async () => {
      // The worker's completions run on its kept pooled connection (a session); the admission
      // MUST move the read position of the process's claims, not one of the session's own.
      const name = `wadmit${Date.now()}`;
      const q = here.queue<number>(name);
      await q.enqueue(0, { concurrencyKey: 'k' });
      await q.enqueue(1, { concurrencyKey: 'k' }); // blocked: the key's limit is 1
      await enqueueBacklog(name, 2, 32);
      let entered!: () => void;
      const inHandler = new Promise<void>((r) => (entered = r));
      let finish!: () => void;
      const gate = new Promise<void>((r) => (finish = r));
      const ran: number[] = [];
      const w = q.work(
        async (job) => {
          ran.push(job.payload);
          entered();
          await gate;
        },
        { concurrency: 1, batchSize: 1, pollInterval: 30_000 },
      );
      let stopped: Promise<unknown> | undefined;
      try {
        await inHandler;
        expect(ran).toEqual([0]);
        const first = await q.claim({ limit: 10, lease: 60_000 });
        expect(first.map((j) => j.payload)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
        stopped = w.stop(); // the worker completes job 0 (admitting job 1) and claims nothing more
        finish();
        await stopped;
        expect(ran).toEqual([0]);
        expect(w.counts.completed).toBe(1);
        const next = await q.claim({ limit: 10, lease: 60_000 });
        expect(next.map((j) => j.payload)).toEqual([1, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
      } finally {
        finish();
        await (stopped ?? w.stop());
      }
    });

    it("a job another process releases behind this one's read position is taken by the claim that finds the backlog ahead short", async () => {
      const name = `short${Date.now()}`;
      await enqueueFirstAndBacklog(name, 15);
      const [taken] = await other.queue<number>(name).claim({ limit: 1, lease: 60_000 });
      expect(taken?.payload).toBe(0);
      const first = await here.queue<number>(name).claim({ limit: 10, lease: 60_000 });
      expect(first.map((j) => j.payload)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      await other.queue<number>(name).release(taken!); // back in line at its place: before job 1
      const next = await here.queue<number>(name).claim({ limit: 10, lease: 60_000 });
      expect(next.map((j) => j.payload)).toEqual([0, 11, 12, 13, 14]);
    });

    it("a claim goes on from where the last claim of any process ended, not from its own place: a job released between the two waits for the fleet's turn at the head", async () => {
      // Claims of a queue take turns through its claim lock; each that holds it reads on from the
      // fleet's place (`<prefix>queue_cursors`), so it does not walk what other processes claimed
      // since its own last claim. What lies behind that place is taken at the turn at the head.
      const name = `fleet${Date.now()}`;
      // Three due times (one per statement): jobs 0-9, 10-14, 15-39; a place is a priority and a due time.
      await enqueueBacklog(name, 0, 10);
      await enqueueBacklog(name, 10, 15);
      await enqueueBacklog(name, 15, 40);
      const place = async (): Promise<unknown[]> => {
        const rows = await db.probe.query<{ priority: unknown; due_us: unknown }>(
          `SELECT \`priority\`, \`due_us\` FROM \`${prefix}queue_cursors\` WHERE \`queue\` = ?`,
          [name],
        );
        return rows.map((r) => [r.priority === null ? null : Number(r.priority), r.due_us === null ? null : typeof r.due_us]);
      };
      expect((await here.queue<number>(name).claim({ limit: 10, lease: 60_000 })).map((j) => j.payload)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const headRead = performance.now(); // that claim read from the head; this process's next claims read from its place
      const theirs = await other.queue<number>(name).claim({ limit: 10, lease: 60_000 });
      expect(theirs.map((j) => j.payload)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
      expect(await place()).toEqual([[0, expect.any(String)]]); // a full read: its last row's place
      await other.queue<number>(name).release(theirs[2]!); // job 12, due after this process's place (job 9) and before the fleet's (job 19)
      const next = await here.queue<number>(name).claim({ limit: 10, lease: 60_000 });
      expect(next.map((j) => j.payload)).toEqual([20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
      await cursorPeriodOver(headRead); // the fleet's turn at the head is due
      const turn = await here.queue<number>(name).claim({ limit: 10, lease: 60_000 });
      expect(turn.map((j) => j.payload)).toEqual([12, 30, 31, 32, 33, 34, 35, 36, 37, 38]);
      expect((await third.queue<number>(name).claim({ limit: 10, lease: 60_000 })).map((j) => j.payload)).toEqual([39]);
      expect(await place()).toEqual([[null, null]]); // a short read: the next claim reads from the head
    });

    it('processes take turns at reading from the head: a claim due to read it right after another process did goes on from its place', async () => {
      const name = `turns${Date.now()}`;
      await enqueueFirstAndBacklog(name, 100);
      const [taken] = await other.queue<number>(name).claim({ limit: 1, lease: 60_000 });
      expect(taken?.payload).toBe(0);
      expect((await here.queue<number>(name).claim({ limit: 10, lease: 60_000 })).map((j) => j.payload)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect((await third.queue<number>(name).claim({ limit: 10, lease: 60_000 })).map((j) => j.payload)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
      const headRead = performance.now(); // both processes' last reads from the head are behind this
      await other.queue<number>(name).release(taken!); // behind both places
      await cursorPeriodOver(headRead); // the processes' own period (local clock): both are due to read from the head
      const turn = await here.queue<number>(name).claim({ limit: 10, lease: 60_000 });
      expect(turn.map((j) => j.payload)).toEqual([0, 21, 22, 23, 24, 25, 26, 27, 28, 29]); // took the turn: read from the head
      await here.queue<number>(name).release(turn[0]!); // behind both places again
      const after = await third.queue<number>(name).claim({ limit: 10, lease: 60_000 });
      expect(after.map((j) => j.payload)).toEqual([30, 31, 32, 33, 34, 35, 36, 37, 38, 39]); // the turn was taken: from its place
    });

    it('a worker that drained a backlog takes a job another process releases behind its read position once idle, within about a second', async () => {
      const name = `idle${Date.now()}`;
      await enqueueFirstAndBacklog(name, 15);
      const [taken] = await other.queue<number>(name).claim({ limit: 1, lease: 60_000 });
      expect(taken?.payload).toBe(0);
      const handled: number[] = [];
      /** When the handler got job 0 (`performance.now()`; 0 before). */
      let zeroAt = 0;
      const w = here.queue<number>(name).work(async (job) => void (handled.push(job.payload), job.payload === 0 && (zeroAt = performance.now())), {
        concurrency: 5,
        pollInterval: 50,
      });
      try {
        await until('jobs 1 to 14 handled', () => handled.length >= 14, 10);
        expect(handled.length).toBe(14); // jobs 1 to 14: the worker's place is after job 14
        await other.queue<number>(name).release(taken!);
        const released = performance.now();
        await until('job 0 handled', () => zeroAt > 0, (3 * BEHIND_MS) / 1000);
        expect(zeroAt - released).toBeLessThan(BEHIND_MS);
        expect([...handled].sort((a, b) => a - b)).toEqual(Array.from({ length: 15 }, (_, i) => i));
      } finally {
        await w.stop();
      }
    });

    it("a job another process releases behind this one's read position while a backlog is ahead is taken within a second, and every job once", async () => {
      const name = `behind${Date.now()}`;
      const total = 3000;
      await enqueueFirstAndBacklog(name, total);
      const [taken] = await other.queue<number>(name).claim({ limit: 1, lease: 60_000 });
      expect(taken?.payload).toBe(0);
      const seen: number[] = [];
      const claimSome = async (): Promise<number[]> => (await here.queue<number>(name).claim({ limit: 10, lease: 60_000 })).map((j) => j.payload);
      seen.push(...(await claimSome())); // a full claim: the read position is after job 10
      await other.queue<number>(name).release(taken!);
      const released = performance.now();
      let tookAt: number | undefined;
      let backlogLeft = true;
      while (tookAt === undefined && backlogLeft) {
        const got = await claimSome();
        if (got.includes(0)) tookAt = performance.now();
        backlogLeft = got.length === 10 && !got.includes(0);
        seen.push(...got);
        await pace(15); // a consumer's own work between claims, so the backlog outlasts CURSOR_MS (not a wait for the database)
      }
      expect(tookAt).toBeDefined();
      expect(tookAt! - released).toBeLessThan(BEHIND_MS);
      // The backlog was not drained first: jobs were left ahead when job 0 was taken.
      expect(seen.length).toBeLessThan(total - 100);
      while (seen.length < total) {
        const got = await claimSome();
        if (got.length === 0) break;
        seen.push(...got);
      }
      expect(seen.length).toBe(total);
      expect(new Set(seen).size).toBe(total);
    }, 60_000);
  });
}
