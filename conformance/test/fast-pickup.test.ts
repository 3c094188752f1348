import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTaskrow, type Taskrow } from '@taskrow/core';
import { mysql2Client, taskrow, type Mysql2Connection } from '@taskrow/mysql2';
import { counting } from '../src/counting.js';
import { mysql2Probe } from '../src/harnesses/mysql2.js';
import { label, targets } from '../src/targets.js';

/** Resolves after `ms` on the local clock: an observation window, not a wait for the database. */
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// An idle worker waits 10 ms, 20 ms, 40 ms, ... (doubling up to pollInterval) between claims, so
// 3 s after it found the queue empty it is inside the wait that runs from about 2.55 s to 5.1 s.
// Without a wake-up an enqueue made then would wait about 2 s for the next claim.
for (const target of targets()) {
  describe(`${label(target)} · mysql2 · fast pickup`, () => {
    const prefix = `fp${process.pid.toString(36)}_`;
    let pool: mysql.Pool;
    let tr: Taskrow;
    beforeAll(async () => {
      pool = mysql.createPool({ uri: target.url, connectionLimit: 4 });
      tr = await taskrow(pool, { prefix });
      await tr.migrate();
    });
    afterAll(async () => {
      const probe = await mysql2Probe(target.url);
      for (const { t } of await probe.query<{ t: string }>('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?', [`${prefix}%`])) {
        await probe.query(`DROP TABLE IF EXISTS \`${t}\``);
      }
      await probe.end();
      await pool?.end();
    });

    it('an enqueue wakes an idle worker of the same process at once, not at its next poll', async () => {
      const q = tr.queue<number>(`w${Date.now()}`);
      const started = new Map<number, number>();
      const w = q.work(async (job) => void started.set(job.payload, performance.now()), { pollInterval: 30 });
      try {
        await pause(3000);
        const t0 = performance.now();
        await q.enqueue(1);
        while (!started.has(1) && performance.now() - t0 < 10_000) await pause(5);
        expect(started.get(1)! - t0).toBeLessThan(1000);
      } finally {
        await w.stop();
      }
    }, 30_000);

    it('an enqueue of one job wakes one of 4 idle workers of the process: one claim, not four', async () => {
      const { client, matching } = counting(mysql2Client(pool));
      const counted = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const q = counted.queue<number>(`o${Date.now()}`);
      const started: number[] = [];
      // Two slots each: a claim that finds one job is short, so the worker does not claim again after it.
      const workers = Array.from({ length: 4 }, () => q.work(async (job) => void started.push(job.payload), { pollInterval: 30, concurrency: 2 }));
      const claims = (): number => matching(/ORDER BY `ready_priority`.*SKIP LOCKED/s);
      try {
        await pause(3000); // every worker is inside its 2.55 s to 5.1 s wait (see above)
        const before = claims();
        const t0 = performance.now();
        await tr.queue<number>(q.name).enqueue(1);
        while (started.length === 0 && performance.now() - t0 < 10_000) await pause(5);
        expect(started).toEqual([1]);
        await pause(200); // an observation window for claims of the workers not rung
        expect(claims() - before).toBe(1);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    }, 30_000);

    it('an idle worker polls with one statement per poll, and still picks up a job another process enqueued', async () => {
      const { client, statements } = counting(mysql2Client(pool));
      const counted = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const name = `i${Date.now()}`;
      let picked = 0;
      const w = counted.queue(name).work(async () => void (picked = performance.now()), { pollInterval: 0.05 });
      try {
        await pause(500); // the waits between polls have grown to pollInterval
        const before = statements();
        const w0 = performance.now();
        await pause(1000);
        const polls = statements() - before;
        // One poll per pollInterval (jittered) of the window as it really ran: a loaded machine
        // stretches timers, so the window is measured, not assumed.
        const intervals = (performance.now() - w0) / 50;
        expect(polls).toBeGreaterThanOrEqual(Math.floor(intervals / 3));
        expect(polls).toBeLessThanOrEqual(Math.floor(intervals * 1.25) + 1);
        // Enqueued inside an application transaction: nothing rings in this process, as for another process.
        const conn = await pool.getConnection();
        try {
          await conn.beginTransaction();
          await tr.in(conn).queue(name).enqueue('x');
          await conn.commit();
        } finally {
          conn.release();
        }
        const t0 = performance.now();
        while (picked === 0 && performance.now() - t0 < 10_000) await pause(5);
        expect(picked - t0).toBeLessThan(500);
      } finally {
        await w.stop();
      }
    }, 30_000);
  });
}
