import { expect, it } from 'vitest';
import { ResourceUnavailableError } from '../../resources/errors.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { leaseLeft, liveLocks, probeExisting, probeKey, probeLocks } from './probe.js';
import { rejection } from '../expect.js';

/** The locking rules and every failure reason, each verified through the probe. */
export function resourcesBasics<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('locks inputs shared and outputs exclusive, then marks the outputs on success', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [a, b, y, z] = ['a', 'b', 'y', 'z'].map((x) => freshName(`${x}.`));
    await r.produce([a!, b!]);
    const job = await r.acquire(freshName('build.'), { inputs: [a!, b!], outputs: [y!, z!], lease: 60_000 });
    expect(job.held).toBe(true);
    expect(job.id).toMatch(/^[0-9a-f]{32}$/);
    expect(await liveLocks(session.probe, prefix, [a!, b!, y!, z!])).toEqual([`${a}:reader`, `${b}:reader`, `${y}:writer`, `${z}:writer`].sort());
    expect((await probeLocks(session.probe, prefix, [a!, y!])).every((l) => l.holder === job.id)).toBe(true);
    expect(await probeExisting(session.probe, prefix, [y!, z!])).toEqual([]);
    await job.release();
    expect(job.held).toBe(false);
    expect(await probeLocks(session.probe, prefix, [a!, b!, y!, z!])).toEqual([]);
    expect(await probeExisting(session.probe, prefix, [y!, z!])).toEqual([y!, z!].sort());
    expect((await probeKey(session.probe, prefix, y!))?.producedBy).toBe(job.name);
    expect(await r.exists([z!, 'never-made', y!])).toEqual([z!, y!]);
  });

  it('lets many jobs read one input at once', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const input = freshName('shared.');
    await r.produce(input);
    const jobs = await Promise.all(Array.from({ length: 5 }, (_, i) => r.acquire(`reader-${i}`, { inputs: [input], outputs: [freshName(`o${i}.`)] })));
    const readers = (await probeLocks(session.probe, prefix, [input])).filter((l) => l.live && l.mode === 'reader');
    expect(new Set(readers.map((l) => l.holder))).toEqual(new Set(jobs.map((j) => j.id)));
    await Promise.all(jobs.map((j) => j.release()));
    expect(await probeLocks(session.probe, prefix, [input])).toEqual([]);
  });

  it('reports input_missing for an input never produced and for one a writer holds', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [never, written] = [freshName('never.'), freshName('written.')];
    await r.produce(written);
    const writer = await r.acquire('writer', { outputs: [written] });
    const err = await rejection<ResourceUnavailableError>(r.acquire('reader', { inputs: [never, written], outputs: [freshName('out.')] }));
    expect(err).toBeInstanceOf(ResourceUnavailableError);
    expect(err.code).toBe('RESOURCE_UNAVAILABLE');
    expect(err.reasons).toEqual([
      { key: never, reason: 'input_missing' },
      { key: written, reason: 'input_missing' },
    ]);
    expect(await liveLocks(session.probe, prefix, [never, written])).toEqual([`${written}:writer`]);
    await writer.release({ failed: true });
  });

  it('reports output_exists without overwrite and gives up at once, ignoring wait', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const out = freshName('exists.');
    await r.produce(out);
    const started = Date.now();
    const err = await rejection<ResourceUnavailableError>(r.acquire('job', { outputs: [out], overwrite: false, wait: 30_000 }));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(err.reasons).toEqual([{ key: out, reason: 'output_exists' }]);
    expect(await probeLocks(session.probe, prefix, [out])).toEqual([]);
    const over = await r.acquire('job', { outputs: [out], overwrite: true });
    expect(await liveLocks(session.probe, prefix, [out])).toEqual([`${out}:writer`]);
    await over.release();
  });

  it('reports output_locked for another writer and output_used for readers', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [locked, used] = [freshName('locked.'), freshName('used.')];
    await r.produce(used);
    const writer = await r.acquire('w', { outputs: [locked] });
    const reader = await r.acquire('r', { inputs: [used], outputs: [freshName('x.')] });
    const err = await rejection<ResourceUnavailableError>(r.acquire('both', { outputs: [locked, used] }));
    expect([...err.reasons].sort((a, b) => a.reason.localeCompare(b.reason))).toEqual([
      { key: locked, reason: 'output_locked' },
      { key: used, reason: 'output_used' },
    ]);
    expect(await liveLocks(session.probe, prefix, [locked, used])).toEqual([`${locked}:writer`, `${used}:reader`].sort());
    await writer.release({ failed: true });
    await reader.release();
    expect(await probeExisting(session.probe, prefix, [locked])).toEqual([]);
  });

  it('takes all locks or none: one blocked key leaves every other key unlocked', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const keys = Array.from({ length: 6 }, (_, i) => freshName(`k${i}.`));
    const inputs = keys.slice(0, 3);
    await r.produce(inputs);
    const blocker = await r.acquire('blocker', { outputs: [keys[5]!] });
    await rejection(r.acquire('all', { inputs, outputs: keys.slice(3) }));
    expect(await liveLocks(session.probe, prefix, keys)).toEqual([`${keys[5]}:writer`]);
    await blocker.release({ failed: true });
    const all = await r.acquire('all', { inputs, outputs: keys.slice(3) });
    expect((await liveLocks(session.probe, prefix, keys)).length).toBe(6);
    await all.release({ failed: true });
  });

  it('canRun() checks the rules and locks nothing', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [inp, out] = [freshName('in.'), freshName('out.')];
    const job = r.job('check', { inputs: [inp], outputs: [out] });
    expect(await job.canRun()).toEqual({ ok: false, reasons: [{ key: inp, reason: 'input_missing' }] });
    await r.produce([inp, out]);
    expect(await job.canRun()).toEqual({ ok: true, reasons: [] });
    expect(await job.canRun({ overwrite: false })).toEqual({ ok: false, reasons: [{ key: out, reason: 'output_exists' }] });
    expect(await probeLocks(session.probe, prefix, [inp, out])).toEqual([]);
    expect(job.held).toBe(false);
  });

  it('alternates release and acquire, with a new holder each time', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const out = freshName('alt.');
    const job = r.job('alternating', { outputs: [out], lease: 120_000 });
    await job.acquire({ lease: 3_600_000 });
    const first = job.id;
    expect(await leaseLeft(session.probe, prefix, first!)).toBeGreaterThan(3500);
    await job.release({ failed: true });
    expect(job.id).toBeUndefined();
    await job.acquire(); // an override on acquire() applies to that acquisition only
    expect(job.id).not.toBe(first);
    const left = await leaseLeft(session.probe, prefix, job.id!);
    expect(left).toBeGreaterThan(100);
    expect(left).toBeLessThanOrEqual(120);
    expect((await probeLocks(session.probe, prefix, [out])).map((l) => l.holder)).toEqual([job.id]);
    await job.release();
    expect(await probeExisting(session.probe, prefix, [out])).toEqual([out]);
  });

  it('treats keys as exact strings: "k", "K", "k " and "k<TAB>" are four keys', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const base = freshName('case.');
    const keys = [`${base}k`, `${base}K`, `${base}k `, `${base}k\t`];
    const job = await r.acquire('exact', { outputs: keys });
    expect((await liveLocks(session.probe, prefix, keys)).length).toBe(4);
    await job.release();
    expect(await r.exists(keys)).toEqual(keys);
    await r.unproduce(`${base}k `);
    expect(await probeExisting(session.probe, prefix, keys)).toEqual([`${base}k`, `${base}K`, `${base}k\t`].sort());
    const emoji = `${base}😀/中文`;
    const e = await r.acquire('unicode', { outputs: [emoji] });
    expect(await liveLocks(session.probe, prefix, [emoji])).toEqual([`${emoji}:writer`]);
    await e.release();
    expect(await probeExisting(session.probe, prefix, [emoji])).toEqual([emoji]);
  });
}
