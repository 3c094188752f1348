import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { useMigratedPool } from '../../../src/setup.js';
import { label, targets } from '../../../src/targets.js';

// A claim is one CALL (schema version 20, packages/core/src/queue/claim-call.ts). Inside it, the
// claims of a queue take the queue's claim lock, a named lock, so that they enter InnoDB one at a
// time; a claim waits for it 1 s at most and then claims without it, and its process claims that
// queue without it for a minute. These cases hold the lock from another session.

/** The claim lock's documented name for `queue` of the jobs table `jobs`, as the server computes it. */
const LOCK_NAME = "CONCAT('taskrow:', LEFT(SHA2(CONCAT(DATABASE(), '.', ?, '.', ?), 256), 56))";

for (const target of targets()) {
  describe(`${label(target)} · mysql2 · a claim's CALL takes its queue's claim lock`, () => {
    const prefix = `cl${process.pid.toString(36)}_`;
    const db = useMigratedPool(target, { prefix });

    /** Whether the claim lock of `queue` is free, as another session sees it. */
    const free = async (queue: string): Promise<boolean> =>
      Number((await db.probe.query<{ f: unknown }>(`SELECT IS_FREE_LOCK(${LOCK_NAME}) AS f`, [`${prefix}queue_jobs`, queue]))[0]!.f) === 1;

    /** Milliseconds one claim of a job of `queue` takes, and the ids it took. */
    const timedClaim = async (queue: string): Promise<{ ms: number; ids: number[] }> => {
      const t0 = performance.now();
      const jobs = await db.tr.queue(queue).claim({ limit: 1, lease: 60_000 });
      return { ms: performance.now() - t0, ids: jobs.map((j) => j.id) };
    };

    it('a claim gives the lock back before it answers; a claim that finds it held waits about a second, claims without it, and its process then claims without waiting', async () => {
      const queue = `l${Date.now()}`;
      const ids = (await db.tr.queue(queue).enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }])).map((e) => e.id);
      const first = await timedClaim(queue);
      expect(first.ids).toEqual([ids[0]]);
      expect(await free(queue)).toBe(true);
      // Another session holds the lock: the next claim waits for it, then claims all the same.
      const held = await db.probe.query<{ g: unknown }>(`SELECT GET_LOCK(${LOCK_NAME}, 0) AS g`, [`${prefix}queue_jobs`, queue]);
      expect(Number(held[0]!.g)).toBe(1);
      try {
        const waited = await timedClaim(queue);
        expect(waited.ids).toEqual([ids[1]]);
        expect(waited.ms).toBeGreaterThanOrEqual(900);
        const after = await timedClaim(queue);
        expect(after.ids).toEqual([ids[2]]);
        expect(after.ms).toBeLessThan(500);
      } finally {
        await db.probe.query(`DO RELEASE_LOCK(${LOCK_NAME})`, [`${prefix}queue_jobs`, queue]);
      }
    }, 20_000);

    it('the lock is per queue: a claim of another queue does not wait for it', async () => {
      const [a, b] = [`a${Date.now()}`, `b${Date.now()}`];
      await db.tr.queue(b).enqueue(1);
      await db.probe.query(`DO GET_LOCK(${LOCK_NAME}, 0)`, [`${prefix}queue_jobs`, a]);
      try {
        const other = await timedClaim(b);
        expect(other.ids).toHaveLength(1);
        expect(other.ms).toBeLessThan(500);
      } finally {
        await db.probe.query(`DO RELEASE_LOCK(${LOCK_NAME})`, [`${prefix}queue_jobs`, a]);
      }
    });
  });
}
