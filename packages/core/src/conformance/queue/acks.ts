import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { makeDue, probeJob, probeJobs, probeNowMs } from './probe.js';

/** complete / fail / release / extend, verified through the probe. */
export function queueAcks<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('completes a batch from several claims: the rows are deleted', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name);
    await q.enqueueMany(Array.from({ length: 30 }, (_, i) => ({ payload: i })));
    const a = await q.claim({ limit: 10, lease: 60_000 });
    const b = await q.claim({ limit: 10, lease: 60_000 });
    await q.complete([...b, ...a.slice(0, 5)]);
    const left = await probeJobs(session.probe, prefix, name);
    expect(left.filter((j) => j.state === 'running').map((j) => j.id)).toEqual(a.slice(5).map((j) => j.id));
    expect(left.filter((j) => j.state === 'ready').length).toBe(10);
    expect(left.length).toBe(15);
    await q.complete(a[5]!);
    expect((await probeJobs(session.probe, prefix, name)).length).toBe(14);
    await q.complete([]);
  });

  it('fails with exponential backoff and jitter, keeping the error', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name, { backoff: { base: 10_000, max: 25_000 }, maxAttempts: 4 });
    const { id } = await q.enqueue('flaky');
    const windows = [
      [5, 10],
      [10, 20],
      [12.5, 25],
    ]; // base * 2^(attempt-1), capped at max, then half to all of it
    for (const [lo, hi] of windows) {
      const [job] = await q.claim({ limit: 1, lease: 60_000 });
      expect(job!.id).toBe(id);
      const out = await q.fail(job!, new Error(`boom ${job!.attempt}`));
      expect(out.state).toBe('delayed');
      const row = (await probeJob(session.probe, prefix, id))!;
      expect(row.state).toBe('delayed');
      expect(row.attempt).toBe(job!.attempt);
      expect(row.lastError).toContain(`boom ${job!.attempt}`);
      expect(row.dueIn).toBeGreaterThan(lo! - 1);
      expect(row.dueIn).toBeLessThanOrEqual(hi!);
      expect(row.runIn).toBeCloseTo(row.dueIn, 6);
      if (out.state === 'delayed') expect(Math.abs(out.runAt.getTime() - row.dueAtMs)).toBeLessThan(1000);
      expect(await q.claim({ limit: 1, lease: 60_000 })).toEqual([]); // not before it is due
      await makeDue(session.probe, prefix, [id]);
    }
    const [last] = await q.claim({ limit: 1, lease: 60_000 });
    expect(last!.attempt).toBe(4);
    expect(await q.fail(last!, 'final straw')).toEqual({ state: 'dead' });
    const dead = (await probeJob(session.probe, prefix, id))!;
    expect(dead).toMatchObject({ state: 'dead', attempt: 4, lastError: 'final straw' });
    await makeDue(session.probe, prefix, [id], 3600);
    expect(await q.claim({ limit: 1, lease: 60_000 })).toEqual([]);
  });

  it('fails with an explicit retryIn', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const { id } = await q.enqueue('x');
    const [job] = await q.claim({ limit: 1, lease: 60_000 });
    await q.fail(job!, { code: 42 }, { retryIn: 300_000 });
    const row = (await probeJob(session.probe, prefix, id))!;
    expect(row.dueIn).toBeGreaterThan(298);
    expect(row.dueIn).toBeLessThanOrEqual(300);
    expect(row.lastError).toBe('{"code":42}');
  });

  it('releases without counting the attempt, back in its place in line or after a delay', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    await q.enqueue('first');
    await q.enqueue('second');
    const [first] = await q.claim({ limit: 1, lease: 60_000 });
    await q.enqueue('third');
    await q.release(first!);
    const row = (await probeJob(session.probe, prefix, first!.id))!;
    expect(row).toMatchObject({ state: 'ready', attempt: 0 });
    const again = await q.claim({ limit: 3, lease: 60_000 });
    expect(again.map((j) => j.payload)).toEqual(['first', 'second', 'third']);
    expect(again[0]!.attempt).toBe(1);
    expect(again[0]!.token).not.toBe(first!.token);
    await q.release(again.slice(0, 2), { delay: 120_000 });
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.map((j) => j.state)).toEqual(['delayed', 'delayed', 'running']);
    expect(rows[0]!.dueIn).toBeGreaterThan(118);
    expect(rows[0]!.attempt).toBe(0);
  });

  it('extends leases by the database clock and resolves to the new expiry', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    await q.enqueueMany([{ payload: 1 }, { payload: 2 }]);
    const jobs = await q.claim({ limit: 2, lease: 5000 });
    const before = await probeNowMs(session.probe);
    const until = await q.extend(jobs, 900_000);
    const after = await probeNowMs(session.probe);
    expect(until.getTime()).toBeGreaterThanOrEqual(before + 900_000 - 1);
    expect(until.getTime()).toBeLessThanOrEqual(after + 900_000 + 1);
    for (const row of await probeJobs(session.probe, prefix, name)) {
      expect(row.dueIn).toBeGreaterThan(895);
      expect(Math.abs(row.dueAtMs - until.getTime())).toBeLessThan(1000);
    }
    // extending does not end the lease: the jobs can still be completed
    await q.complete(jobs);
    expect(await probeJobs(session.probe, prefix, name)).toEqual([]);
  });
}
