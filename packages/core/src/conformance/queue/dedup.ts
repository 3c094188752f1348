import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { makeDue, probeJobs } from './probe.js';

/** A dedup key admits one live (ready, delayed or running) job per queue. */
export function queueDedup<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('a second enqueue with the key is a no-op while the job is pending or running, not after it finishes', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const first = await q.enqueue('v1', { dedupKey: 'report:2024-01-01', delay: 60 });
    expect(await q.enqueue('v2', { dedupKey: 'report:2024-01-01' })).toEqual({ id: first.id, deduplicated: true });
    await makeDue(session.probe, prefix, [first.id]);
    const [job] = await q.claim({ limit: 1, lease: 60 });
    expect(job!.payload).toBe('v1');
    expect(await q.enqueue('v3', { dedupKey: 'report:2024-01-01' })).toEqual({ id: first.id, deduplicated: true });
    expect((await probeJobs(session.probe, prefix, name)).map((j) => [j.payload, j.dedup])).toEqual([['v1', 'report:2024-01-01']]);
    await q.complete(job!);
    const again = await q.enqueue('v4', { dedupKey: 'report:2024-01-01' });
    expect(again.deduplicated).toBe(false);
    expect(again.id).not.toBe(first.id);
    expect((await probeJobs(session.probe, prefix, name)).map((j) => j.payload)).toEqual(['v4']);
  });

  it('frees the key when the job dies or is kept as done', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name, { keepFinishedFor: 3600 });
    await q.enqueue('a', { dedupKey: 'k-dead', maxAttempts: 1 });
    await q.enqueue('b', { dedupKey: 'k-done' });
    const jobs = await q.claim({ limit: 2, lease: 60 });
    await q.fail(jobs.find((j) => j.payload === 'a')!, 'no');
    await q.complete(jobs.find((j) => j.payload === 'b')!);
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.map((j) => [j.state, j.dedup])).toEqual([['dead', null], ['done', null]]);
    const res = await q.enqueueMany([{ payload: 'a2', dedupKey: 'k-dead' }, { payload: 'b2', dedupKey: 'k-done' }]);
    expect(res.map((r) => r.deduplicated)).toEqual([false, false]);
  });

  it('dedups within one batch and against live jobs, keeping input order', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const live = await q.enqueue('live', { dedupKey: 'L' });
    const res = await q.enqueueMany([
      { payload: 'dup-of-live', dedupKey: 'L' },
      { payload: 'x1', dedupKey: 'X' },
      { payload: 'plain' },
      { payload: 'x2', dedupKey: 'X' },
      { payload: 'y', dedupKey: 'Y' },
    ]);
    expect(res[0]).toEqual({ id: live.id, deduplicated: true });
    expect(res[1]!.deduplicated).toBe(false);
    expect(res[3]).toEqual({ id: res[1]!.id, deduplicated: true });
    expect(res[2]!.deduplicated).toBe(false);
    expect(res[4]!.deduplicated).toBe(false);
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.map((j) => [j.id, j.payload])).toEqual([
      [live.id, 'live'],
      [res[1]!.id, 'x1'],
      [res[2]!.id, 'plain'],
      [res[4]!.id, 'y'],
    ]);
  });

  it('treats keys as exact strings and scopes them to the queue', async () => {
    const { session, prefix } = ctx();
    const [name, other] = [freshName('q'), freshName('q')];
    const q = session.taskrow.queue(name);
    const res = await q.enqueueMany(['a', 'A', 'a ', 'a\t', '😀'].map((k) => ({ payload: k, dedupKey: k })));
    expect(res.every((r) => !r.deduplicated)).toBe(true);
    expect((await session.taskrow.queue(other).enqueue('same key, other queue', { dedupKey: 'a' })).deduplicated).toBe(false);
    expect((await probeJobs(session.probe, prefix, name)).length).toBe(5);
  });

  it('admits one job when many clients enqueue the same key at once', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const { clients, close } = await session.openClients(8);
    try {
      const results = await Promise.all(
        clients.map((c, i) => c.queue(name).enqueueMany([{ payload: `c${i}`, dedupKey: 'shared' }, { payload: `own${i}`, dedupKey: `own${i}` }])),
      );
      const shared = results.map((r) => r[0]!);
      expect(new Set(shared.map((r) => r.id)).size).toBe(1);
      expect(shared.filter((r) => !r.deduplicated).length).toBe(1);
      expect(results.every((r) => !r[1]!.deduplicated)).toBe(true);
      const rows = await probeJobs(session.probe, prefix, name);
      expect(rows.length).toBe(9);
      expect(rows.filter((j) => j.dedup === 'shared').map((j) => j.id)).toEqual([shared[0]!.id]);
    } finally {
      await close();
    }
  });
}
