import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { expireHolder, liveLocks, probeExisting, probeKey, probeLocks } from './probe.js';
import { rejection } from '../expect.js';

/** Admin tools: produce by hand (also inside the application's transaction), force release, running jobs, sweep. */
export function resourcesAdmin<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('produces and unproduces keys by hand, with an optional lifetime', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [a, b] = [freshName('hand.'), freshName('hand.')];
    expect(await r.produce([a, b, a], { ttl: 600_000, by: 'operator' })).toBe(2);
    expect(await probeExisting(session.probe, prefix, [a, b])).toEqual([a, b].sort());
    const row = await probeKey(session.probe, prefix, a);
    expect(row?.producedBy).toBe('operator');
    expect(row?.expiresIn).toBeGreaterThan(590);
    expect(await r.produce(a)).toBe(1);
    expect((await probeKey(session.probe, prefix, a))?.expiresIn).toBeNull();
    expect(await r.unproduce([a, freshName('never.')])).toBe(1);
    expect(await probeExisting(session.probe, prefix, [a, b])).toEqual([b]);
  });

  it('produces inside the application transaction: rolled back with it, committed with it', async () => {
    const { session, prefix } = ctx();
    const [gone, kept] = [freshName('tx.'), freshName('tx.')];
    await session.withDriverTransaction('rollback', async (tx) => {
      await session.taskrow.in(tx).resources().produce(gone);
      expect(await session.taskrow.in(tx).resources().exists(gone)).toEqual([gone]);
    });
    expect(await probeExisting(session.probe, prefix, [gone])).toEqual([]);
    await session.withDriverTransaction('commit', async (tx) => {
      await session.taskrow.in(tx).resources().produce(kept);
      expect(await probeExisting(session.probe, prefix, [kept])).toEqual([]);
    });
    expect(await probeExisting(session.probe, prefix, [kept])).toEqual([kept]);
    const err = await session.withDriverTransaction('rollback', (tx) =>
      rejection(
        session.taskrow
          .in(tx)
          .resources()
          .acquire('in-tx', { outputs: [gone] }),
      ),
    );
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toContain('application transaction');
    expect(await probeLocks(session.probe, prefix, [gone])).toEqual([]);
  });

  it('force-releases reader locks of inputs and writer locks of outputs only', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [inp, out] = [freshName('in.'), freshName('out.')];
    await r.produce(inp);
    const job = await r.acquire('forced', { inputs: [inp], outputs: [out] });
    expect(await r.forceRelease({ outputs: [inp], inputs: [out] })).toBe(0);
    expect(await liveLocks(session.probe, prefix, [inp, out])).toEqual([`${inp}:reader`, `${out}:writer`].sort());
    expect(await r.forceRelease({ inputs: [inp] })).toBe(1);
    expect(await liveLocks(session.probe, prefix, [inp, out])).toEqual([`${out}:writer`]);
    expect(await job.refresh()).toEqual([{ key: inp, reason: 'input_lock_lost' }]);
    expect(await r.forceRelease({ outputs: [out] })).toBe(1);
    expect(await probeLocks(session.probe, prefix, [inp, out])).toEqual([]);
    await job.release({ failed: true });
    expect(await r.forceRelease({})).toBe(0);
  });

  it('lists running jobs with what they hold, and not those whose lease passed', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [inp, out] = [freshName('in.'), freshName('out.')];
    const name = freshName('running.');
    await r.produce(inp);
    const job = await r.acquire(name, { inputs: [inp], outputs: [out] });
    const mine = (await r.running()).filter((j) => j.job === name);
    expect(mine.length).toBe(1);
    expect(mine[0]).toMatchObject({ id: job.id, inputs: [inp], outputs: [out] });
    expect(mine[0]!.owner).toContain(String(process.pid));
    expect(mine[0]!.leaseUntil.getTime()).toBeGreaterThan(mine[0]!.acquiredAt.getTime());
    await expireHolder(session.probe, prefix, job.id!);
    expect((await r.running()).filter((j) => j.job === name)).toEqual([]);
    await rejection(job.release());
  });

  it('sweeps only rows whose lease passed', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [dead, alive] = [await r.acquire('dead', { outputs: [freshName('d.')] }), await r.acquire('alive', { outputs: [freshName('a.')] })];
    await expireHolder(session.probe, prefix, dead.id!);
    await r.sweep();
    const rows = await session.probe.query<{ h: string }>(
      `SELECT LOWER(HEX(holder)) AS h FROM \`${prefix}resource_locks\` UNION ALL SELECT LOWER(HEX(holder)) FROM \`${prefix}resource_jobs\``,
    );
    expect(rows.map((x) => x.h)).not.toContain(dead.id);
    expect(rows.filter((x) => x.h === alive.id).length).toBe(2);
    const [expired] = await session.probe.query<{ n: unknown }>(
      `SELECT (SELECT COUNT(*) FROM \`${prefix}resource_locks\` WHERE lease_until <= UTC_TIMESTAMP(6))
            + (SELECT COUNT(*) FROM \`${prefix}resource_jobs\` WHERE lease_until <= UTC_TIMESTAMP(6)) AS n`,
    );
    expect(Number(expired?.n)).toBe(0);
    await alive.release({ failed: true });
    expect((await rejection(dead.release())).code).toBe('LEASE_LOST');
  });
}
