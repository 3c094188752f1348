import { expect, it } from 'vitest';
import { ResourceLockLostError, type ResourceUnavailableError } from '../../resources/errors.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { expireHolder, expireKey, leaseLeft, liveLocks, probeExisting, probeKey, probeLocks } from './probe.js';
import { rejection } from '../expect.js';

/** Waiting, leases on the database clock (time moved through the probe), refresh and output lifetimes. */
export function resourcesLeases<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('waits for a writer to finish, then runs', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const out = freshName('busy.');
    const first = await r.acquire('first', { outputs: [out] });
    let settled = false;
    const second = r.acquire('second', { outputs: [out], wait: 30_000 }).finally(() => (settled = true));
    // The waiter keeps retrying while the writer holds the key.
    expect(await liveLocks(session.probe, prefix, [out])).toEqual([`${out}:writer`]);
    expect((await probeLocks(session.probe, prefix, [out])).map((l) => l.holder)).toEqual([first.id]);
    expect(settled).toBe(false);
    await first.release();
    const job = await second;
    expect((await probeLocks(session.probe, prefix, [out])).map((l) => l.holder)).toEqual([job.id]);
    await job.release({ failed: true });
  });

  it('waits for an input to be produced by an upstream job', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [mid, final] = [freshName('mid.'), freshName('final.')];
    const downstream = r.acquire('downstream', { inputs: [mid], outputs: [final], wait: 30_000 });
    const upstream = await r.acquire('upstream', { outputs: [mid] });
    await upstream.release();
    const job = await downstream;
    expect(await liveLocks(session.probe, prefix, [mid, final])).toEqual([`${final}:writer`, `${mid}:reader`].sort());
    await job.release();
    expect(await probeExisting(session.probe, prefix, [mid, final])).toEqual([final, mid].sort());
  });

  it('fails after wait seconds with the reasons, holding nothing', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [inp, out] = [freshName('in.'), freshName('out.')];
    const started = Date.now();
    const err = await rejection<ResourceUnavailableError>(r.acquire('late', { inputs: [inp], outputs: [out], wait: 300 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(err.reasons).toEqual([{ key: inp, reason: 'input_missing' }]);
    expect(await probeLocks(session.probe, prefix, [inp, out])).toEqual([]);
  });

  it('frees an expired lease for others; the old holder sees its lock lost', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [inp, out] = [freshName('in.'), freshName('out.')];
    await r.produce(inp);
    const old = await r.acquire('old', { inputs: [inp], outputs: [out], lease: 3_600_000 });
    await rejection(r.acquire('new', { outputs: [out] }));
    await expireHolder(session.probe, prefix, old.id!);
    const fresh = await r.acquire('new', { outputs: [out, inp] });
    // The expired rows were replaced: only the new holder's locks remain.
    expect((await probeLocks(session.probe, prefix, [inp, out])).map((l) => `${l.key}:${l.mode}:${l.holder === fresh.id}`)).toEqual(
      [`${inp}:writer:true`, `${out}:writer:true`].sort(),
    );
    const lost = await old.refresh();
    expect([...lost].sort((a, b) => a.reason.localeCompare(b.reason))).toEqual([
      { key: inp, reason: 'input_lock_lost' },
      { key: out, reason: 'output_lock_lost' },
    ]);
    expect(old.signal.aborted).toBe(true);
    expect(old.signal.reason).toBeInstanceOf(ResourceLockLostError);
    const err = await rejection<ResourceLockLostError>(old.release());
    expect(err.code).toBe('LEASE_LOST');
    expect(err.lost.length).toBe(2);
    expect(await probeExisting(session.probe, prefix, [out])).toEqual([]);
    expect((await probeLocks(session.probe, prefix, [inp, out])).map((l) => `${l.key}:${l.holder}`)).toEqual([inp, out].sort().map((k) => `${k}:${fresh.id}`));
    await fresh.release();
    expect(await probeExisting(session.probe, prefix, [inp, out])).toEqual([inp, out].sort());
  });

  it('does not mark outputs when a lease passed unnoticed, even if nobody took the keys', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const out = freshName('out.');
    const job = await r.acquire('slow', { outputs: [out] });
    await expireHolder(session.probe, prefix, job.id!);
    const err = await rejection<ResourceLockLostError>(job.release());
    expect(err.lost).toEqual([{ key: out, reason: 'output_lock_lost' }]);
    expect(await probeExisting(session.probe, prefix, [out])).toEqual([]);
    expect(await probeLocks(session.probe, prefix, [out])).toEqual([]);
  });

  it('refresh() extends the lease by the database clock', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const job = await r.acquire('long', { outputs: [freshName('out.')], lease: 120_000 });
    expect(await leaseLeft(session.probe, prefix, job.id!)).toBeGreaterThan(100);
    await expireHolder(session.probe, prefix, job.id!, -5); // 5 s left
    expect(await leaseLeft(session.probe, prefix, job.id!)).toBeLessThan(6);
    expect(await job.refresh()).toEqual([]);
    expect(await leaseLeft(session.probe, prefix, job.id!)).toBeGreaterThan(100);
    expect(job.signal.aborted).toBe(false);
    await job.release({ failed: true });
  });

  it('refreshes automatically while held', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    // A 3 s lease refreshes every second; with 2 s left, only a refresh can bring it back over 2.5 s.
    const job = await r.acquire('auto', { outputs: [freshName('out.')], lease: 3000, autoRefresh: true });
    await expireHolder(session.probe, prefix, job.id!, -2);
    let left = await leaseLeft(session.probe, prefix, job.id!);
    expect(left).toBeLessThanOrEqual(2);
    for (let i = 0; i < 200 && (left ?? 0) <= 2.5; i++) {
      await new Promise((res) => setTimeout(res, 25));
      left = await leaseLeft(session.probe, prefix, job.id!);
    }
    expect(left).toBeGreaterThan(2.5);
    expect(job.signal.aborted).toBe(false);
    await job.release({ failed: true });
    expect(await leaseLeft(session.probe, prefix, job.id!)).toBeNull();
  });

  it('makes outputs expire after outputTtl; an expired input is missing again', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [out, next] = [freshName('ttl.'), freshName('next.')];
    await (await r.acquire('ttl', { outputs: [out], outputTtl: 3_600_000 })).release();
    const row = await probeKey(session.probe, prefix, out);
    expect(row?.expiresIn).toBeGreaterThan(3500);
    expect(row?.expiresIn).toBeLessThanOrEqual(3600);
    const reader = await r.acquire('reader', { inputs: [out], outputs: [next] });
    await reader.release({ failed: true });
    await expireKey(session.probe, prefix, out);
    expect(await r.exists(out)).toEqual([]);
    const err = await rejection<ResourceUnavailableError>(r.acquire('reader', { inputs: [out], outputs: [next] }));
    expect(err.reasons).toEqual([{ key: out, reason: 'input_missing' }]);
    // Without overwrite, an expired output no longer blocks; producing it again without a TTL keeps it.
    await (await r.acquire('again', { outputs: [out], overwrite: false })).release();
    expect((await probeKey(session.probe, prefix, out))?.expiresIn).toBeNull();
    expect(await probeExisting(session.probe, prefix, [out])).toEqual([out]);
  });
}
