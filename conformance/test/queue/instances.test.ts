import { once } from 'node:events';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTaskrow, type QueueWorker } from '@taskrow/core';
import { dropPrefix } from '@taskrow/core/conformance';
import { mysql2Client, taskrow, type Mysql2Connection } from '@taskrow/mysql2';
import { counting } from '../../src/counting.js';
import { mysql2Probe } from '../../src/harnesses/mysql2.js';
import { label, targets } from '../../src/targets.js';

// Everything a taskrow instance keeps in memory (wake-ups, doorbell sleepers, read positions, kept
// connections, caches) hangs off that instance: two instances in one process share nothing, and
// close() releases what the instance kept.

/** A local hand-off: an enqueue leasing its jobs to a napping worker of its own instance. */
const LOCAL_HAND = /enqueue_jobs_leased/;

/** The pool's connections: all of them, and those idle in the pool (mysql2's own counts). */
function poolCounts(pool: mysql.Pool): { all: number; free: number } {
  const core = (pool as unknown as { pool: { _allConnections: { length: number }; _freeConnections: { length: number } } }).pool;
  return { all: core._allConnections.length, free: core._freeConnections.length };
}

/** Timers this process holds (`setTimeout` / `setInterval`, referenced or not). */
const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

for (const target of targets()) {
  describe(`${label(target)} · mysql2 · taskrow instances`, () => {
    const prefix = `in${process.pid.toString(36)}_`;
    let probe: Awaited<ReturnType<typeof mysql2Probe>>;
    const pools: mysql.Pool[] = [];

    /** A taskrow over a pool of its own whose statements are counted, its CALLs and its sessions' statements included. */
    const counted = async () => {
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 6 });
      pools.push(pool);
      const c = counting(mysql2Client(pool), { calls: true });
      return { ...c, tr: await createTaskrow<Mysql2Connection>({ client: c.client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } }) };
    };

    beforeAll(async () => {
      probe = await mysql2Probe(target.url);
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 2 });
      await (await taskrow(pool, { prefix })).migrate();
      await pool.end();
    });
    afterAll(async () => {
      await dropPrefix(probe, prefix);
      await probe.end();
      await Promise.all(pools.map((p) => p.end()));
    });

    it('two instances share nothing: an enqueue hands jobs to a napping worker of its own instance, never to one of another instance in the same process', async () => {
      const a = await counted();
      const b = await counted();
      const name = `share${Date.now()}`;
      const done: number[] = [];
      const w: QueueWorker<number> = a.tr.queue<number>(name).work(async (job) => void done.push(job.payload), { concurrency: 4, pollInterval: 50 });
      try {
        await once(w, 'idle');
        // The instance's own enqueue leases to its napping worker: the hand-off this test looks for exists.
        await a.tr.queue<number>(name).enqueueMany([{ payload: 1 }, { payload: 2 }]);
        while (done.length < 2) await once(w, 'completed');
        expect(a.matching(LOCAL_HAND)).toBe(1);
        // Another instance's enqueue into the same queue of the same database, the worker napping again: no in-process hand-off.
        await b.tr.queue<number>(name).enqueueMany([{ payload: 3 }, { payload: 4 }]);
        while (done.length < 4) await once(w, 'completed');
        expect(b.matching(LOCAL_HAND)).toBe(0);
        expect(done.sort()).toEqual([1, 2, 3, 4]);
      } finally {
        await w.stop();
        await a.tr.close();
        await b.tr.close();
      }
    });

    it('close() releases what the instance kept: its pooled connection and its timers, at once', async () => {
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 4 });
      pools.push(pool);
      const tr = await taskrow(pool, { prefix });
      const before = timers();
      // A batch with dedup keys is a transaction on the instance's kept enqueue connection.
      await tr.queue(`close${Date.now()}`).enqueueMany([
        { payload: 1, dedupKey: 'a' },
        { payload: 2, dedupKey: 'b' },
      ]);
      const kept = poolCounts(pool);
      expect(kept.free).toBeLessThan(kept.all);
      await tr.close();
      const after = poolCounts(pool);
      expect(after.free).toBe(after.all);
      expect(timers()).toBeLessThanOrEqual(before);
    });
  });
}
