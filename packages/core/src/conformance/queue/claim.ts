import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import { lockingSession, type SuiteContext } from '../session.js';
import { makeDue, probeJobs, probeNowMs, setDueOffset } from './probe.js';

/** claim(): what is runnable, in which order, with which lease. */
export function queueClaim<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('claims by priority (lower first), then by due time, then by id', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const ids = (
      await q.enqueueMany([
        { payload: 'p5-a', priority: 5 },
        { payload: 'p0-a' },
        { payload: 'p0-b' },
        { payload: 'p-3', priority: -3 },
        { payload: 'p5-b', priority: 5 },
        { payload: 'p0-c' },
      ])
    ).map((r) => r.id);
    // p0-c became due before the others of its priority: it has waited longest.
    await setDueOffset(session.probe, prefix, ids[5]!, -60);
    const first = await q.claim({ limit: 4, lease: 60_000 });
    expect(first.map((j) => j.payload)).toEqual(['p-3', 'p0-c', 'p0-a', 'p0-b']);
    const rest = await q.claim({ limit: 4, lease: 60_000 });
    expect(rest.map((j) => j.payload)).toEqual(['p5-a', 'p5-b']);
    expect(await q.claim({ limit: 4, lease: 60_000 })).toEqual([]);
  });

  it('leases by the database clock, counts the attempt and hands out the row token', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name);
    await q.enqueueMany([1, 2, 3].map((payload) => ({ payload, maxAttempts: 3, group: 'g' })));
    const before = await probeNowMs(session.probe);
    const jobs = await q.claim({ limit: 2, lease: 120_000 });
    const after = await probeNowMs(session.probe);
    expect(jobs.map((j) => j.payload)).toEqual([1, 2]);
    const rows = await probeJobs(session.probe, prefix, name);
    for (const j of jobs) {
      const row = rows.find((r) => r.id === j.id)!;
      expect(row.state).toBe('running');
      expect(row.attempt).toBe(1);
      expect(row.token).toBe(j.token);
      expect(row.dueAtMs).toBeGreaterThanOrEqual(before + 120_000 - 1);
      expect(row.dueAtMs).toBeLessThanOrEqual(after + 120_000 + 1);
      expect(j.leaseUntil.getTime()).toBeLessThanOrEqual(row.dueAtMs);
      expect(j.leaseUntil.getTime()).toBeGreaterThanOrEqual(before + 120_000 - 1);
      expect(j).toMatchObject({ queue: name, attempt: 1, maxAttempts: 3, priority: 0, group: 'g' });
    }
    expect(rows.find((r) => r.payload === 3)!.state).toBe('ready');
  });

  it('returns [] for limit 0 and for an empty queue, changing nothing', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    expect(await q.claim({ limit: 5, lease: 10_000 })).toEqual([]);
    await q.enqueue('x');
    expect(await q.claim({ limit: 0, lease: 10_000 })).toEqual([]);
    expect((await probeJobs(session.probe, prefix, name)).map((j) => j.state)).toEqual(['ready']);
  });

  it('does not claim delayed jobs before they are due, and claims them once due', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const [late, now] = await q.enqueueMany([{ payload: 'late', delay: 600_000, priority: -1 }, { payload: 'now' }]);
    expect((await q.claim({ limit: 10, lease: 60_000 })).map((j) => j.id)).toEqual([now!.id]);
    expect(await q.claim({ limit: 10, lease: 60_000 })).toEqual([]);
    await makeDue(session.probe, prefix, [late!.id]);
    const got = await q.claim({ limit: 10, lease: 60_000 });
    expect(got.map((j) => j.payload)).toEqual(['late']);
    expect(got[0]!.attempt).toBe(1);
  });

  it('filters by group', async () => {
    const { session } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    await q.enqueueMany([{ payload: 'a1', group: 'a' }, { payload: 'b1', group: 'b' }, { payload: 'none' }, { payload: 'a2', group: 'a', priority: -1 }]);
    expect((await q.claim({ limit: 10, lease: 60_000, group: 'a' })).map((j) => j.payload)).toEqual(['a2', 'a1']);
    expect(await q.claim({ limit: 10, lease: 60_000, group: 'c' })).toEqual([]);
    expect((await q.claim({ limit: 10, lease: 60_000 })).map((j) => j.payload).sort()).toEqual(['b1', 'none']);
  });

  it('keeps queues apart', async () => {
    const { session, prefix } = ctx();
    const [a, b] = [freshName('q'), freshName('q')];
    await session.taskrow.queue(a).enqueue('for-a');
    expect(await session.taskrow.queue(b).claim({ limit: 10, lease: 60_000 })).toEqual([]);
    expect((await session.taskrow.queue(a).claim({ limit: 10, lease: 60_000 })).map((j) => j.payload)).toEqual(['for-a']);
    expect(await probeJobs(session.probe, prefix, b)).toEqual([]);
  });

  const skips = 'skips rows another transaction holds instead of waiting for them';
  it(skips, async () => {
    const c = ctx();
    const { prefix } = c;
    const session = await lockingSession(c, `queue › claim › ${skips}`);
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name);
    const ids = (await q.enqueueMany([1, 2, 3].map((payload) => ({ payload })))).map((r) => r.id);
    // The probe's connection locks job 1 until the ROLLBACK below.
    await session.probe.query('BEGIN');
    let got: Awaited<ReturnType<typeof q.claim>> | 'waited';
    try {
      await session.probe.query(`SELECT id FROM \`${prefix}queue_jobs\` WHERE id = ? FOR UPDATE`, [ids[0]]);
      const timeout = new Promise<'waited'>((r) => setTimeout(() => r('waited'), 10_000));
      got = await Promise.race([q.claim({ limit: 10, lease: 60_000 }), timeout]);
    } finally {
      await session.probe.query('ROLLBACK');
    }
    expect(got).not.toBe('waited');
    expect(got === 'waited' ? got : got.map((j) => j.payload)).toEqual([2, 3]);
  });
}
