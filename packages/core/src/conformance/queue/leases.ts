import { expect, it } from 'vitest';
import { LeaseLostError } from '../../queue/model/errors.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { makeDue, probeJob, probeJobs } from './probe.js';
import { rejection } from '../expect.js';

/** Expired leases come back with the attempt counted; stale acks fail with LEASE_LOST. */
export function queueLeases<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('takes back an expired lease with the attempt counted and a new token; the old holder is fenced off', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const { id } = await q.enqueue('x');
    const [old] = await q.claim({ limit: 1, lease: 60_000 });
    expect(await q.claim({ limit: 1, lease: 60_000 })).toEqual([]); // the lease is live
    await makeDue(session.probe, prefix, [id]);
    const [fresh] = await q.claim({ limit: 1, lease: 60_000 });
    expect(fresh!.id).toBe(id);
    expect(fresh!.attempt).toBe(2);
    expect(fresh!.token).not.toBe(old!.token);
    for (const stale of [() => q.complete(old!), () => q.fail(old!, 'late'), () => q.release(old!), () => q.extend(old!, 60_000)]) {
      const err = await rejection(stale, 'LEASE_LOST');
      expect(err).toBeInstanceOf(LeaseLostError);
      expect((err as LeaseLostError).lost).toEqual([id]);
    }
    const row = (await probeJob(session.probe, prefix, id))!;
    expect(row).toMatchObject({ state: 'running', attempt: 2, token: fresh!.token, lastError: null });
    await q.complete(fresh!);
    expect(await probeJob(session.probe, prefix, id)).toBeUndefined();
  });

  it('an expired lease not yet taken back cannot be acked either', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const { id } = await q.enqueueMany([{ payload: 1 }]).then((r) => r[0]!);
    const [job] = await q.claim({ limit: 1, lease: 60_000 });
    // Another claimer's promotion runs first (here: a claim of another group finds nothing).
    await makeDue(session.probe, prefix, [id]);
    expect(await q.claim({ limit: 1, lease: 60_000, group: 'other' })).toEqual([]);
    expect((await probeJob(session.probe, prefix, id))!.state).toBe('ready');
    await rejection(q.complete(job!), 'LEASE_LOST');
    expect((await probeJob(session.probe, prefix, id))!).toMatchObject({ state: 'ready', attempt: 1 });
  });

  it('a batch ack applies the held jobs and reports the lost ones', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    await q.enqueueMany([1, 2, 3].map((payload) => ({ payload })));
    const jobs = await q.claim({ limit: 3, lease: 60_000 });
    const stolen = jobs[1]!;
    await makeDue(session.probe, prefix, [stolen.id]);
    const [thief] = await q.claim({ limit: 3, lease: 60_000 });
    expect(thief!.id).toBe(stolen.id);
    const err = (await rejection(q.complete(jobs), 'LEASE_LOST')) as LeaseLostError;
    expect(err.lost).toEqual([stolen.id]);
    expect([...err.applied].sort((a, b) => a - b)).toEqual([jobs[0]!.id, jobs[2]!.id].sort((a, b) => a - b));
    expect(err.message).toContain(String(stolen.id));
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.map((r) => [r.id, r.state, r.token])).toEqual([[stolen.id, 'running', thief!.token]]);
  });

  it('a poison job whose worker dies every time ends dead after maxAttempts', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const { id } = await q.enqueue('poison', { maxAttempts: 3 });
    for (let attempt = 1; attempt <= 3; attempt++) {
      const [job] = await q.claim({ limit: 1, lease: 60_000 });
      expect(job!.attempt).toBe(attempt);
      await makeDue(session.probe, prefix, [id]); // the worker died: nobody acks, the lease runs out
    }
    expect(await q.claim({ limit: 1, lease: 60_000 })).toEqual([]);
    const row = (await probeJob(session.probe, prefix, id))!;
    expect(row.state).toBe('dead');
    expect(row.attempt).toBe(3);
    expect(row.lastError).toContain('lease expired');
  });

  it('a worker whose connection dies mid-batch loses its jobs to another after the lease; its late acks fail', async () => {
    const c = ctx();
    const name = freshName('q');
    const crashed = await c.openExtra();
    const qa = crashed.taskrow.queue<number>(name);
    const qb = c.session.taskrow.queue<number>(name);
    await qb.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ payload: i })));
    const held = await qa.claim({ limit: 25, lease: 30_000 });
    expect(held.length).toBe(25);
    expect(await crashed.killClientConnections()).toBeGreaterThan(0); // the worker never acks
    const others = await qb.claim({ limit: 100, lease: 60_000 });
    expect(others.map((j) => j.payload)).toEqual(Array.from({ length: 15 }, (_, i) => 25 + i));
    await makeDue(
      c.session.probe,
      c.prefix,
      held.map((j) => j.id),
    ); // their leases run out
    const taken = await qb.claim({ limit: 100, lease: 60_000 });
    expect(taken.map((j) => j.id)).toEqual(held.map((j) => j.id));
    expect(taken.every((j) => j.attempt === 2)).toBe(true);
    const late = (await rejection(qa.complete(held), 'LEASE_LOST')) as LeaseLostError;
    expect([...late.lost].sort((a, b) => a - b)).toEqual(held.map((j) => j.id).sort((a, b) => a - b));
    expect(late.applied).toEqual([]);
    await rejection(qa.extend(held.slice(0, 3), 60_000), 'LEASE_LOST');
    await rejection(qa.fail(held[0]!, 'late'), 'LEASE_LOST');
    await qb.complete([...taken, ...others]);
    expect(await probeJobs(c.session.probe, c.prefix, name)).toEqual([]);
  });
}
