import { expect, it } from 'vitest';
import type { TaskrowError } from '../../errors.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { rejection } from '../expect.js';
import { aborted } from '../queue/holding.js';
import { until } from '../queue/probe.js';
import { leaseLeft, probeExisting, probeLocks } from './probe.js';

/** A lease is never trusted past its end, and refresh() applies jobs.py's rules. */
export function resourcesHolding<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('aborts an auto-refreshing job with LEASE_LOST before its lease passes when no refresh can be confirmed', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources({ releaseOnExit: false });
    const out = freshName('stuck.');
    const job = await r.acquire('stuck', { outputs: [out], lease: 3000, autoRefresh: true });
    let seen: { reason: unknown; leftS: number | null; held: boolean } | undefined;
    // Another transaction holds the output's key row: every refresh waits on it.
    await session.withDriverTransaction('rollback', async (tx) => {
      await session.taskrow.in(tx).resources().produce(out);
      const reason = await aborted(job.signal);
      seen = { reason, leftS: await leaseLeft(session.probe, prefix, job.id!), held: job.held };
    });
    expect((seen!.reason as TaskrowError).code).toBe('LEASE_LOST');
    expect(seen!.leftS).toBeGreaterThan(0); // aborted while the database still held the lease
    expect(seen!.held).toBe(false);
    // release() frees what is left and marks nothing.
    expect((await rejection(job.release(), 'LEASE_LOST')).message).toContain('lease ended');
    expect(await probeExisting(session.probe, prefix, [out])).toEqual([]);
    expect(await probeLocks(session.probe, prefix, [out])).toEqual([]);
    const next = await r.acquire('next', { outputs: [out] });
    await next.release({ failed: true });
  });

  it('refresh() reports an input that no longer exists and, without overwrite, an output produced meanwhile, and extends nothing', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources({ releaseOnExit: false });
    const [inp, out] = [freshName('in.'), freshName('out.')];
    await r.produce(inp);
    const job = await r.acquire('reader', { inputs: [inp], outputs: [out], lease: 60_000, overwrite: false });
    const before = await leaseLeft(session.probe, prefix, job.id!);
    await r.unproduce(inp);
    await r.produce(out);
    const lost = await job.refresh();
    expect([...lost].sort((a, b) => a.key.localeCompare(b.key))).toEqual(
      [
        { key: inp, reason: 'input_lock_lost' },
        { key: out, reason: 'output_exists' },
      ].sort((a, b) => a.key.localeCompare(b.key)),
    );
    expect(job.held).toBe(false);
    expect(job.signal.aborted).toBe(true);
    // Nothing was extended: the job row's lease did not move on.
    expect(await leaseLeft(session.probe, prefix, job.id!)).toBeLessThanOrEqual(before!);
    await rejection(job.release(), 'LEASE_LOST');
    await until('locks gone', async () => (await probeLocks(session.probe, prefix, [inp, out])).length === 0);
  });
}
