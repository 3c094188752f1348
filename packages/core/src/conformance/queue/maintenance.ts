import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { makeDue, probeJobs, probeKeyed, setDueOffset } from './probe.js';

/** retryDead, retention of finished jobs, purges and stats. */
export function queueMaintenance<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('re-drives dead jobs with their attempts reset, all or by id', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name, { maxAttempts: 1 });
    await q.enqueueMany([1, 2, 3].map((payload) => ({ payload })));
    for (const job of await q.claim({ limit: 3, lease: 60_000 })) await q.fail(job, `e${job.payload}`);
    expect((await probeJobs(session.probe, prefix, name)).map((j) => j.state)).toEqual(['dead', 'dead', 'dead']);
    const ids = (await probeJobs(session.probe, prefix, name)).map((j) => j.id);
    expect(await q.retryDead({ ids: [ids[1]!, 999_999_999] })).toBe(1);
    expect((await q.claim({ limit: 5, lease: 60_000 })).map((j) => [j.payload, j.attempt])).toEqual([[2, 1]]);
    expect(await q.retryDead()).toBe(2);
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.filter((j) => j.state === 'ready').map((j) => [j.payload, j.attempt, j.lastError])).toEqual([
      [1, 0, 'e1'],
      [3, 0, 'e3'],
    ]);
    expect(await q.retryDead()).toBe(0);
    // another queue's dead job is not touched
    expect(await session.taskrow.queue(freshName('q')).retryDead({ ids })).toBe(0);
  });

  it("remove() deletes jobs that have not started (ready, delayed, blocked), frees their dedup and concurrency keys, and leaves running, dead and other queues' jobs alone", async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name, { maxAttempts: 1 });
    const states = async (): Promise<Record<string, string>> =>
      Object.fromEntries((await probeKeyed(session.probe, prefix, name)).map((j) => [j.payload as string, j.state]));
    const [running, dead] = await q.enqueueMany([{ payload: 'running' }, { payload: 'dead' }]);
    const held = await q.claim({ limit: 2, lease: 60_000 });
    await q.fail(held[1]!, 'x');
    const [k1, k2] = await q.enqueueMany(['k1', 'k2', 'k3'].map((payload) => ({ payload, concurrencyKey: 'k' })));
    await q.complete(await q.claim({ limit: 1, lease: 60_000 })); // k1 done: k2 admitted, holding the key's one slot
    const ready = await q.enqueue('ready', { dedupKey: 'd' });
    const delayed = await q.enqueue('delayed', { delay: 3_600_000 });
    const otherQueue = session.taskrow.queue(freshName('q'));
    const other = await otherQueue.enqueue('other');
    expect(await states()).toEqual({ running: 'running', dead: 'dead', k2: 'ready', k3: 'blocked', ready: 'ready', delayed: 'delayed' });
    expect(await q.remove([k1!.id, k2!.id, running!.id, dead!.id, ready.id, delayed.id, other.id, 999_999_999])).toBe(3);
    // k2's slot went to k3 in the same transaction; the dedup key is free again.
    expect(await states()).toEqual({ running: 'running', dead: 'dead', k3: 'ready' });
    expect((await otherQueue.getJob(other.id))?.state).toBe('ready');
    expect((await q.enqueue('again', { dedupKey: 'd' })).deduplicated).toBe(false);
    // A blocked job goes too, given alone; removing it again finds nothing.
    const [k4] = await q.enqueueMany([{ payload: 'k4', concurrencyKey: 'k' }]);
    expect((await q.claim({ limit: 10, lease: 60_000 })).map((j) => j.payload).sort()).toEqual(['again', 'k3']);
    expect((await states())['k4']).toBe('blocked');
    expect(await q.remove(k4!.id)).toBe(1);
    expect(await q.remove([k4!.id, k4!.id])).toBe(0);
    expect(Object.keys(await states())).toEqual(['running', 'dead', 'k3', 'again']);
  });

  it('promote() makes delayed jobs due now (waiting to run or to retry): ready at once without a key, admitted by the next claim with one; other jobs and queues are left alone', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name, { backoff: { base: 3_600_000, max: 3_600_000 } });
    const [later, keyed] = await q.enqueueMany([
      { payload: 'later', delay: 3_600_000 },
      { payload: 'keyed', delay: 3_600_000, concurrencyKey: 'k' },
    ]);
    await q.enqueue('retrying');
    const [failed] = await q.claim({ limit: 1, lease: 60_000 });
    expect((await q.fail(failed!, 'x')).state).toBe('delayed');
    const running = await q.enqueue('running');
    await q.claim({ limit: 1, lease: 60_000 });
    const otherQueue = session.taskrow.queue(freshName('q'));
    const other = await otherQueue.enqueue('other', { delay: 3_600_000 });
    expect(await q.claim({ limit: 5, lease: 60_000 })).toEqual([]);
    expect(await q.promote([later!.id, keyed!.id, failed!.id, running.id, other.id, 999_999_999])).toBe(3);
    const states = new Map((await probeJobs(session.probe, prefix, name)).map((j) => [j.payload, [j.state, j.dueIn <= 0]]));
    expect(Object.fromEntries(states)).toEqual({ later: ['ready', true], keyed: ['delayed', true], retrying: ['ready', true], running: ['running', false] });
    const claimed = await q.claim({ limit: 5, lease: 60_000 });
    expect(claimed.map((j) => [j.payload, j.attempt]).sort()).toEqual([
      ['keyed', 1],
      ['later', 1],
      ['retrying', 2],
    ]);
    expect((await otherQueue.getJob(other.id))?.state).toBe('delayed');
    expect(await q.promote(later!.id)).toBe(0);
    await expect(q.promote([later!.id, -1])).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('remove() refuses bad ids before changing anything, and inside an application transaction commits or rolls back with it', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const [a, b] = await q.enqueueMany([{ payload: 1 }, { payload: 2 }]);
    for (const bad of ['1', [a!.id, 0], [a!.id, 1.5], null, Array.from({ length: 1001 }, (_, i) => i + 1)]) {
      await expect(q.remove(bad as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    await session.withDriverTransaction('rollback', async (tx) => {
      expect(await session.taskrow.in(tx).queue(name).remove([a!.id, b!.id])).toBe(2);
    });
    expect((await probeJobs(session.probe, prefix, name)).map((j) => j.id)).toEqual([a!.id, b!.id]);
    await session.withDriverTransaction('commit', async (tx) => {
      expect(await session.taskrow.in(tx).queue(name).remove(a!.id)).toBe(1);
    });
    expect((await probeJobs(session.probe, prefix, name)).map((j) => j.id)).toEqual([b!.id]);
  });

  it('keeps finished jobs for keepFinishedFor, then purge() deletes them', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name, { keepFinishedFor: 3_600_000 });
    await q.enqueueMany([1, 2, 3].map((payload) => ({ payload })));
    const jobs = await q.claim({ limit: 3, lease: 60_000 });
    await q.complete(jobs);
    const kept = await probeJobs(session.probe, prefix, name);
    expect(kept.map((j) => j.state)).toEqual(['done', 'done', 'done']);
    expect(kept[0]!.dueIn).toBeGreaterThan(3590);
    expect(await q.claim({ limit: 3, lease: 60_000 })).toEqual([]);
    expect(await q.purge()).toBe(0);
    await makeDue(session.probe, prefix, [kept[0]!.id, kept[1]!.id]);
    expect(await q.purge()).toBe(2);
    expect((await probeJobs(session.probe, prefix, name)).map((j) => j.id)).toEqual([kept[2]!.id]);
  });

  it("purge() applies retention by count and to dead jobs: the newest keepFinishedCount finished jobs stay, keepDeadFor and keepDeadCount limit dead ones, and a call's options override the handle's", async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const kept = session.taskrow.queue<number>(name, { keepFinishedFor: 3_600_000, keepFinishedCount: 2 });
    await kept.enqueueMany([1, 2, 3, 4].map((payload) => ({ payload })));
    for (const job of await kept.claim({ limit: 4, lease: 60_000 })) await kept.complete(job); // one by one: each finishes later
    const dying = session.taskrow.queue<number>(name, { maxAttempts: 1 });
    await dying.enqueueMany([5, 6, 7].map((payload) => ({ payload })));
    for (const job of await dying.claim({ limit: 3, lease: 60_000 })) await dying.fail(job, 'x');
    const left = async (state: string): Promise<unknown[]> =>
      (await probeJobs(session.probe, prefix, name)).filter((j) => j.state === state).map((j) => j.payload);
    expect([await left('done'), await left('dead')]).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7],
    ]);
    expect(await kept.purge()).toBe(2); // the two oldest finished; dead jobs are kept for ever by default
    expect([await left('done'), await left('dead')]).toEqual([
      [3, 4],
      [5, 6, 7],
    ]);
    const five = (await probeJobs(session.probe, prefix, name)).find((j) => j.payload === 5)!;
    await setDueOffset(session.probe, prefix, five.id, -7200); // died two hours ago
    expect(await dying.purge({ keepDeadFor: 3_600_000 })).toBe(1);
    expect(await dying.purge({ keepDeadCount: 1 })).toBe(1);
    expect([await left('done'), await left('dead')]).toEqual([[3, 4], [7]]);
    expect(await dying.purge({ keepDeadCount: 1 })).toBe(0);
    for (const bad of [{ keepDeadCount: -1 }, { keepDeadFor: Number.NaN }, { keepFinishedCount: 1.5 }, { bogus: 1 }]) {
      await expect(kept.purge(bad as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    expect(() => session.taskrow.queue(name, { keepDeadFor: -1 })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect([await left('done'), await left('dead')]).toEqual([[3, 4], [7]]);
  });

  it('purgeDead deletes dead jobs, all or by id', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name, { maxAttempts: 1 });
    await q.enqueueMany([1, 2, 3, 4].map((payload) => ({ payload })));
    const jobs = await q.claim({ limit: 3, lease: 60_000 });
    for (const j of jobs) await q.fail(j, 'x');
    expect(await q.purgeDead({ ids: [jobs[0]!.id] })).toBe(1);
    expect(await q.purgeDead()).toBe(2);
    expect((await probeJobs(session.probe, prefix, name)).map((j) => j.state)).toEqual(['ready']);
  });

  it('reports counts by state, the dead count and the oldest runnable age by the database clock', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name, { keepFinishedFor: 60_000 });
    expect(await q.stats()).toEqual({
      queue: name,
      counts: { ready: 0, delayed: 0, running: 0, done: 0, dead: 0, blocked: 0 },
      dead: 0,
      oldestRunnableAge: null,
      pausedAt: null,
    });
    const ids = (
      await q.enqueueMany([
        { payload: 'run' },
        { payload: 'done' },
        { payload: 'dead', maxAttempts: 1 },
        { payload: 'r1' },
        { payload: 'r2' },
        { payload: 'later', delay: 600_000 },
      ])
    ).map((r) => r.id);
    const jobs = await q.claim({ limit: 3, lease: 60_000 });
    await q.complete(jobs[1]!);
    await q.fail(jobs[2]!, 'x');
    await setDueOffset(session.probe, prefix, ids[3]!, -100);
    const s = await q.stats();
    expect(s.counts).toEqual({ ready: 2, delayed: 1, running: 1, done: 1, dead: 1, blocked: 0 });
    expect(s.dead).toBe(1);
    expect(s.oldestRunnableAge).toBeGreaterThanOrEqual(100_000);
    expect(s.oldestRunnableAge).toBeLessThan(130_000);
    // an expired lease counts as runnable from its place in line (its run_at), before it is taken back
    await q.claim({ limit: 2, lease: 60_000 });
    expect((await q.stats()).oldestRunnableAge).toBeNull();
    await session.probe.query(`UPDATE \`${prefix}queue_jobs\` SET run_at = UTC_TIMESTAMP(6) - INTERVAL 500 SECOND WHERE id = ?`, [ids[0]]);
    await makeDue(session.probe, prefix, [ids[0]!]);
    const age = (await q.stats()).oldestRunnableAge!;
    expect(age).toBeGreaterThanOrEqual(500_000);
    expect(age).toBeLessThan(530_000);
  });
}
