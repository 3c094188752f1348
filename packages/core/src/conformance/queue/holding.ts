import { expect, it } from 'vitest';
import { expectNone } from '../expect.js';
import { TaskrowError } from '../../errors.js';
import { freshName, type ConformanceTarget } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeJob, probeJobs, probeNowMs, until } from './probe.js';

/** Resolves with the signal's reason once it aborts. */
export const aborted = (signal: AbortSignal): Promise<unknown> =>
  new Promise((r) => (signal.aborted ? r(signal.reason) : signal.addEventListener('abort', () => r(signal.reason), { once: true })));

/**
 * The lease (milliseconds) of a kit case that needs a worker to keep extending it: 1 s, or 10 s on a
 * cluster, where every extend is certified by the group (on a multi-writer cluster it may also
 * lose a certification race and run again) and a 2-core machine running 3-node clusters under the
 * rest of the kit stalls commits for seconds. A shorter lease there leaves an extend too little
 * time: the worker gives the lease up, as it must (it never trusts a lease it could not confirm),
 * and the case would see a lost job instead of an extension.
 */
export const extendedLease = (target: ConformanceTarget): number => (target.certifiedCommits ? 10_000 : 1000);

/** How the worker holds leases: exactly the jobs it still holds are extended; no lease is trusted past its end. */
export function queueHolding<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('keeps extending its other jobs when a handler completes its own job in its own transaction', async () => {
    const { session, prefix, target } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    // The handler's own ack (on another node of a cluster) can make a heartbeat lose a certification race;
    // on a single server 2 s leave a heartbeat time to be confirmed on a loaded machine.
    const lease = Math.max(2000, extendedLease(target));
    await q.enqueueMany(['self', 'a', 'b'].map((payload) => ({ payload })));
    const errors: unknown[] = [];
    const outcome = new Map<string, string>();
    let selfAcked = false;
    const w = q.work(
      async (job, { signal }) => {
        if (job.payload === 'self') {
          await session.withDriverTransaction('commit', (tx) => session.taskrow.in(tx).queue(name).complete(job));
          selfAcked = true;
          return;
        }
        const first = (await probeJob(session.probe, prefix, job.id))!.dueAtMs;
        // Two extensions past the first lease: only a heartbeat that extends this job gets there.
        const extended = until(
          `job ${job.payload} extended`,
          async () => selfAcked && (await probeJob(session.probe, prefix, job.id))!.dueAtMs > first + 1.5 * lease,
          10 + (5 * lease) / 1000,
        );
        outcome.set(job.payload, await Promise.race([extended.then(() => 'extended'), aborted(signal).then(() => 'aborted')]));
      },
      { concurrency: 3, batchSize: 3, lease, pollInterval: 50, onError: (e) => void errors.push(e) },
    );
    await until('both jobs settled', () => outcome.size === 2, 10 + (5 * lease) / 1000);
    await w.stop();
    expect(Object.fromEntries(outcome)).toEqual({ a: 'extended', b: 'extended' });
    expectNone('errors reported to onError', errors);
    expect(w.counts).toEqual({ completed: 2, failed: 0, lost: 0 });
    expect(await probeJobs(session.probe, prefix, name)).toEqual([]);
  });

  it('aborts the handler with LEASE_LOST before its lease passes when no extension can be confirmed, and never acks it', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const { id } = await q.enqueue('stuck');
    let seen: { reason: unknown; leftMs: number } | undefined;
    const w = q.work(
      async (job, { signal }) => {
        // Another transaction holds the job's row: every heartbeat of this job waits on it.
        await session.withDriverTransaction('rollback', async (tx) => {
          await session.taskrow.in(tx).queue(name).extend(job, 60_000);
          const reason = await aborted(signal);
          const due = (await probeJob(session.probe, prefix, id))!.dueAtMs; // the committed expiry
          seen = { reason, leftMs: due - (await probeNowMs(session.probe)) };
        });
      },
      { lease: 3000, pollInterval: 50 },
    );
    await until('handler aborted', () => seen !== undefined, 30);
    expect(seen!.reason).toBeInstanceOf(TaskrowError);
    expect((seen!.reason as TaskrowError).code).toBe('LEASE_LOST');
    expect(seen!.leftMs).toBeGreaterThan(0); // aborted while the database still held the lease
    await until('the worker gave the job up', () => w.counts.lost === 1);
    await w.stop();
    expect(w.counts).toMatchObject({ completed: 0, lost: 1 });
    // Never acked: still running on its first claim until the lease passes, then another claim takes it.
    expect(await probeJob(session.probe, prefix, id)).toMatchObject({ state: 'running', attempt: 1 });
    await until('taken by another claim after the lease passed', async () => (await q.claim({ limit: 1, lease: 60_000 })).length === 1, 30);
    expect(await probeJob(session.probe, prefix, id)).toMatchObject({ state: 'running', attempt: 2 });
  });

  it('job.leaseLeft() ends on the local clock before the database lease, moves with a confirmed extend, and is 0 once acked', async () => {
    const { session, prefix } = ctx();
    const q = session.taskrow.queue(freshName('q'));
    await q.enqueueMany([{ payload: 1 }, { payload: 2 }]);
    const t0 = performance.now();
    // A lease of 4 s: its margin (10%, 400 ms) leaves room for the probe's reads on a loaded machine.
    const [a, b] = await q.claim({ limit: 2, lease: 4000 });
    const left = a!.leaseLeft();
    // Counted from no earlier than t0, less the margin.
    expect(left).toBeLessThanOrEqual(3600);
    expect(left).toBeGreaterThanOrEqual(3600 - (performance.now() - t0));
    expect(Object.keys(a!)).not.toContain('leaseLeft');
    await until('the local lease of a ended', () => a!.leaseLeft() === 0, 10);
    const probed = (await probeJob(session.probe, prefix, a!.id))!;
    expect(probed.state).toBe('running');
    expect(probed.dueAtMs - (await probeNowMs(session.probe))).toBeGreaterThan(0); // the database still holds it
    // b's lease ended locally too; a confirmed extend gives it a new one, counted from the extend.
    expect(b!.leaseLeft()).toBe(0);
    const t1 = performance.now();
    await q.extend([b!], 30_000);
    expect(b!.leaseLeft()).toBeGreaterThan(27_000 - (performance.now() - t1));
    expect(b!.leaseLeft()).toBeLessThanOrEqual(27_000);
    await q.complete([a!, b!]);
    expect(b!.leaseLeft()).toBe(0);
  });
}
