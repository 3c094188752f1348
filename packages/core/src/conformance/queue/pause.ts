import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import type { QueueWorker } from '../../queue/model/worker-types.js';
import { probeJobs, probeNowMs, until } from './probe.js';

const POLL = 250;
/** Resolves once `ms` passed on the local clock: an observation window, not a wait for the database. */
const watch = (ms: number): Promise<void> => {
  const end = performance.now() + ms;
  return until(`${ms} ms passed`, () => performance.now() >= end);
};

/** Pause and resume: persisted per queue, for every claimer of every process. */
export function queuePause<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('pause() stops claims of this queue only, for every client, while enqueues go on; resume() brings them back', async () => {
    const { session, prefix } = ctx();
    const [name, otherName] = [freshName('q'), freshName('q')];
    const q = session.taskrow.queue<number>(name);
    const other = session.taskrow.queue<number>(otherName);
    await q.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3 }]);
    await other.enqueue(9);
    const { clients, close } = await session.openClients(1);
    try {
      const elsewhere = clients[0]!.queue<number>(name);
      await q.pause();
      const stored = async (): Promise<number[]> =>
        (
          await session.probe.query<{ at: unknown }>(
            `SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', paused_at) AS at FROM \`${prefix}queues\` WHERE queue = ?`,
            [name],
          )
        ).map((r) => Number(r.at) / 1000);
      const [pausedMs] = await stored();
      expect(Math.abs(pausedMs! - (await probeNowMs(session.probe)))).toBeLessThan(5000);
      expect(await q.isPaused()).toBe(true);
      expect(await elsewhere.isPaused()).toBe(true);
      expect((await q.stats()).pausedAt?.getTime()).toBe(Math.floor(pausedMs!));
      expect(await q.claim({ limit: 10, lease: 60_000 })).toEqual([]);
      expect(await elsewhere.claim({ limit: 10, lease: 60_000 })).toEqual([]);
      expect((await other.claim({ limit: 10, lease: 60_000 })).map((j) => j.payload)).toEqual([9]);
      await q.enqueue(4);
      await q.pause(); // idempotent: the first pause time stays
      expect(await stored()).toEqual([pausedMs]);
      expect((await probeJobs(session.probe, prefix, name)).map((j) => j.state)).toEqual(['ready', 'ready', 'ready', 'ready']);
      await elsewhere.resume();
      expect(await q.isPaused()).toBe(false);
      expect((await q.stats()).pausedAt).toBeNull();
      expect((await q.claim({ limit: 10, lease: 60_000 })).map((j) => j.payload)).toEqual([1, 2, 3, 4]);
      await q.resume(); // idempotent
      expect(await q.isPaused()).toBe(false);
    } finally {
      await close();
    }
  });

  it('a pause inside the application transaction takes effect at its commit, and never after a rollback', async () => {
    const { session } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    await q.enqueueMany([{ payload: 1 }, { payload: 2 }]);
    await session.withDriverTransaction('rollback', (tx) => session.taskrow.in(tx).queue(name).pause());
    expect(await q.isPaused()).toBe(false);
    expect(await q.claim({ limit: 1, lease: 60_000 })).toHaveLength(1);
    await session.withDriverTransaction('commit', async (tx) => {
      await session.taskrow.in(tx).queue(name).pause();
      expect(await q.isPaused()).toBe(false); // not before the commit
    });
    expect(await q.isPaused()).toBe(true);
    expect(await q.claim({ limit: 1, lease: 60_000 })).toEqual([]);
  });

  it(`pause stops 4 busy workers within one poll interval (${POLL} ms) and resume restarts them within one; every job runs once`, async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name);
    const JOBS = 400;
    await q.enqueueMany(Array.from({ length: JOBS }, (_, i) => ({ payload: i })));
    const runs = new Map<number, number>();
    const starts: number[] = [];
    const { clients, close } = await session.openClients(4);
    let workers: QueueWorker[] = [];
    const ready = async (): Promise<number> => (await probeJobs(session.probe, prefix, name)).filter((j) => j.state === 'ready').length;
    try {
      workers = clients.map((c) =>
        c.queue<number>(name).work(
          async (job) => {
            starts.push(performance.now());
            runs.set(job.payload, (runs.get(job.payload) ?? 0) + 1);
            await watch(2);
          },
          { concurrency: 2, batchSize: 2, pollInterval: POLL },
        ),
      );
      await until('50 jobs started', () => starts.length >= 50);
      await q.pause();
      // From one poll interval after the pause on, no claim takes a job: the ready count stays put.
      await watch(POLL * 2);
      const left = await ready();
      await watch(POLL * 3);
      expect(await ready()).toBe(left);
      expect(left).toBeGreaterThan(0);
      const before = starts.length;
      await q.resume();
      const resumed = performance.now();
      await until('the workers took jobs again', () => starts.length > before, 10);
      // On a multi-writer cluster the workers' first claims after the resume take the same head rows
      // on different nodes: all but one lose the certification race at COMMIT and run again after a
      // backoff, so the first start may come several poll intervals later there.
      const polls = ctx().target.multiWriterCluster ? 20 : 2;
      expect(starts[before]! - resumed).toBeLessThan(POLL * polls);
      await until('every job ran', () => runs.size === JOBS, 60);
      await Promise.all(workers.map((w) => w.stop()));
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
      expect(runs.size).toBe(JOBS);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await close();
    }
  });
}
