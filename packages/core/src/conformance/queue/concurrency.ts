import { expect, it } from 'vitest';
import type { Job } from '../../queue/model/types.js';
import type { QueueWorker } from '../../queue/model/worker-types.js';
import { expectNone } from '../expect.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeJobs, until } from './probe.js';

/** Jobs of the many-workers run: TASKROW_CONFORMANCE_QUEUE_JOBS, default 10,000. */
function jobCount(): number {
  const n = Number(process.env['TASKROW_CONFORMANCE_QUEUE_JOBS'] ?? 10_000);
  return Number.isInteger(n) && n > 0 ? n : 10_000;
}

/** Many claimers and workers on separate connections: disjoint claims, nothing lost, nothing done twice. */
export function queueConcurrency<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('16 parallel claimers get disjoint jobs, and together all of them', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const total = 2000;
    await session.taskrow.queue<number>(name).enqueueMany(Array.from({ length: total }, (_, i) => ({ payload: i })));
    const { clients, close } = await session.openClients(16);
    try {
      const claimed = await Promise.all(
        clients.map(async (c) => {
          const mine: Job<number>[] = [];
          for (;;) {
            const got = await c.queue<number>(name).claim({ limit: 25, lease: 300_000 });
            if (got.length === 0) return mine;
            mine.push(...got);
          }
        }),
      );
      const ids = claimed.flat().map((j) => j.id);
      expect(ids.length).toBe(total);
      expect(new Set(ids).size).toBe(total);
      expect(claimed.filter((m) => m.length > 0).length).toBeGreaterThan(1);
      const rows = await probeJobs(session.probe, prefix, name);
      expect(rows).toHaveLength(total);
      const tokens = new Map(claimed.flat().map((j) => [j.id, j.token]));
      expect(rows.filter((j) => j.state !== 'running' || j.attempt !== 1 || tokens.get(j.id) !== j.token)).toEqual([]);
    } finally {
      await close();
    }
  });

  it(`${jobCount().toLocaleString('en-US')} jobs through 8 workers while 2 producers enqueue: each completed exactly once, none lost`, async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const total = jobCount();
    const { clients, close } = await session.openClients(10);
    const runs = new Map<number, number>();
    const errors: unknown[] = [];
    let workers: QueueWorker[] = [];
    try {
      workers = clients.slice(0, 8).map((c) =>
        c.queue<number>(name).work((job: Job<number>) => void runs.set(job.payload, (runs.get(job.payload) ?? 0) + 1), {
          concurrency: 8,
          batchSize: 50,
          lease: 120_000,
          pollInterval: 50,
          onError: (e) => void errors.push(e),
        }),
      );
      await Promise.all(
        clients.slice(8).map(async (c, p) => {
          for (let i = p * 100; i < total; i += 200) {
            const items = [];
            for (let k = i; k < Math.min(total, i + 100); k++) items.push({ payload: k });
            await c.queue<number>(name).enqueueMany(items);
          }
        }),
      );
      await until('every job handled', () => runs.size === total, 120);
      const stopped = await Promise.all(workers.map((w) => w.stop()));
      expect(stopped.reduce((s, r) => s + r.released, 0)).toBe(0);
      expectNone('errors reported to onError', errors);
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
      expect(workers.reduce((s, w) => s + w.counts.completed, 0)).toBe(total);
      expect(workers.filter((w) => w.counts.completed > 0).length).toBeGreaterThan(1);
      expectNone('jobs left in the table', await probeJobs(session.probe, prefix, name), (j) => `${j.state}, attempt ${j.attempt}`);
    } finally {
      await Promise.allSettled(workers.map((w) => w.stop({ timeout: 0 })));
      await close();
    }
  });
}
