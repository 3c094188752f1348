import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import type { QueueWorker } from '../../queue/model/worker-types.js';
import { rejection } from '../expect.js';
import { until } from './probe.js';

const LEASE = 60_000;

/** Rate limits: at most N starts in any window, fleet-wide, by the database clock. */
export function queueRate<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('6 workers on 3 clients start at most 4 jobs in any 0.3 s window (database clock), and run every job once', async () => {
    const { session } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name);
    await q.setRateLimit({ limit: 4, per: 300 });
    const JOBS = 16;
    await q.enqueueMany(Array.from({ length: JOBS }, (_, i) => ({ payload: i })));
    // When each job started: its claim's database time (the lease's end less its length).
    const starts = new Map<number, number>();
    let twice = 0;
    const { clients, close } = await session.openClients(3);
    let workers: QueueWorker[] = [];
    try {
      expect(await clients[0]!.queue(name).getRateLimit()).toEqual({ limit: 4, per: 300 });
      workers = clients.flatMap((c) =>
        [0, 1].map(() =>
          c.queue<number>(name).work(
            async (job) => {
              if (starts.has(job.payload)) twice += 1;
              starts.set(job.payload, job.leaseUntil.getTime() - LEASE);
            },
            { concurrency: 4, batchSize: 4, lease: LEASE, pollInterval: 20 },
          ),
        ),
      );
      await until('every job started', () => starts.size === JOBS, 60);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await close();
    }
    expect(twice).toBe(0);
    const times = [...starts.values()].sort((a, b) => a - b);
    // Times are whole milliseconds of microsecond clocks: a window of 300 ms may show as 299.
    const mostInWindow = Math.max(...times.map((t0) => times.filter((t) => t >= t0 && t < t0 + 299).length));
    expect(mostInWindow).toBeLessThanOrEqual(4);
    expect(mostInWindow).toBe(4); // the workers took every start the limit allowed, so a breach would show
    expect(times[times.length - 1]! - times[0]!).toBeGreaterThanOrEqual(3 * 299);
  });

  it('a claim takes no more jobs than free rate slots, none when none is free; releases do not give starts back', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name);
    await q.setRateLimit({ limit: 2, per: 3_600_000 });
    await q.enqueueMany([1, 2, 3, 4, 5].map((payload) => ({ payload })));
    const first = await q.claim({ limit: 10, lease: LEASE });
    expect(first.map((j) => j.payload)).toEqual([1, 2]);
    expect(await q.claim({ limit: 10, lease: LEASE })).toEqual([]);
    await q.release(first);
    expect(await q.claim({ limit: 10, lease: LEASE })).toEqual([]);
    const slots = await session.probe.query<{ left: unknown }>(
      `SELECT TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), free_at) AS \`left\` FROM \`${prefix}queue_rate_slots\` WHERE queue = ? ORDER BY slot`,
      [name],
    );
    expect(slots.map((s) => Number(s.left) > 3500)).toEqual([true, true]);
    // One window later (moved through the probe) the two slots serve two starts again.
    await session.probe.query(`UPDATE \`${prefix}queue_rate_slots\` SET free_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE queue = ?`, [name]);
    expect((await q.claim({ limit: 10, lease: LEASE })).map((j) => j.payload)).toEqual([1, 2]);
    await q.setRateLimit({ limit: 3, per: 3_600_000 });
    expect((await q.claim({ limit: 10, lease: LEASE })).map((j) => j.payload)).toEqual([3]);
    await q.setRateLimit(null);
    expect(await q.getRateLimit()).toBeNull();
    expect((await q.claim({ limit: 10, lease: LEASE })).map((j) => j.payload)).toEqual([4, 5]);
  });

  it('rejects bad rate limits, naming them, writing nothing', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const bad: [unknown, string][] = [
      [{ limit: 0, per: 1000 }, 'setRateLimit() limit'],
      [{ limit: 1.5, per: 1000 }, 'setRateLimit() limit'],
      [{ limit: 1, per: 0 }, 'setRateLimit() per'],
      [{ limit: 1, per: Number.NaN }, 'setRateLimit() per'],
      [{ limit: 1, per: 86_400_001 }, 'setRateLimit() per must be a finite number of milliseconds from 1 to 86,400,000, got 86400001'],
      [{ limit: 1 }, 'setRateLimit() per'],
      [{ limit: 1, per: 1000, burst: 2 }, 'burst'],
      [5, 'setRateLimit()'],
      [undefined, 'setRateLimit()'],
    ];
    for (const [value, says] of bad) {
      const err = await rejection(q.setRateLimit(value as never), 'INVALID_ARGUMENT');
      expect(err.message).toContain(says);
    }
    expect(await session.probe.query(`SELECT 1 FROM \`${prefix}queue_rate_slots\` WHERE queue = ?`, [name])).toHaveLength(0);
    expect(await q.getRateLimit()).toBeNull();
  });
}
