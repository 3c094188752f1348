import { expect, it } from 'vitest';
import { MAX_KEY_BYTES } from '../../keys.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeLocks, probeRowCounts } from './probe.js';
import { rejection } from '../expect.js';
import { refusesOption } from '../queue/strict.js';

async function allRows(ctx: SuiteContext<unknown>): Promise<string> {
  const counts = await probeRowCounts(ctx.session.probe, ctx.prefix);
  const [k] = await ctx.session.probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${ctx.prefix}resources\``);
  return `${counts.locks}/${counts.jobs}/${Number(k?.n)}`;
}

/** Bad input: a TaskrowError naming the problem, thrown before any SQL, and nothing written or locked. */
export function resourcesBadInput<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('rejects bad keys and job names with INVALID_KEY, writing nothing', async () => {
    const c = ctx() as SuiteContext<unknown>;
    const r = c.session.taskrow.resources();
    const before = await allRows(c);
    const bad: unknown[] = ['', 42, null, undefined, {}, '\ud800', 'z'.repeat(MAX_KEY_BYTES + 1)];
    for (const key of bad) {
      const asInput = await rejection(() => r.acquire('job', { inputs: [key as string] }));
      expect(asInput.code, String(key)).toBe('INVALID_KEY');
      expect((await rejection(() => r.job('job', { outputs: [key as string] }))).code).toBe('INVALID_KEY');
      expect((await rejection(() => r.job(key as string))).code).toBe('INVALID_KEY');
      expect((await rejection(() => r.produce([key as string]))).code).toBe('INVALID_KEY');
    }
    expect((await rejection(() => r.acquire('job', { inputs: ['ok', ''] }))).message).toContain('#1');
    expect(r.job('job', { inputs: 'abc' }).inputs).toEqual(['abc']);
    expect((await rejection(() => r.job('job', { outputs: 7 as unknown as string[] }))).code).toBe('INVALID_KEY');
    expect(await allRows(c)).toBe(before);
  });

  it('rejects a key that is both input and output of one job, naming it', async () => {
    const c = ctx() as SuiteContext<unknown>;
    const r = c.session.taskrow.resources();
    const key = freshName('both.');
    const before = await allRows(c);
    const direct = await rejection(() => r.acquire('job', { inputs: [key], outputs: [key] }));
    expect(direct.code).toBe('INVALID_ARGUMENT');
    expect(direct.message).toContain(key);
    const job = r.job('job', { inputs: [key] });
    expect((await rejection(() => job.addOutputs('other', key))).message).toContain('both an input and an output');
    expect(job.outputs).toEqual([]);
    expect((await rejection(() => r.job('job', { outputs: [key] }).addInputs(key))).code).toBe('INVALID_ARGUMENT');
    expect(await allRows(c)).toBe(before);
  });

  it('rejects negative, zero, NaN and infinite leases and waits, and non-boolean flags', async () => {
    const c = ctx() as SuiteContext<unknown>;
    const r = c.session.taskrow.resources();
    const out = freshName('opt.');
    const before = await allRows(c);
    const cases: [object, string][] = [
      [{ lease: -1000 }, 'lease'],
      [{ lease: 0 }, 'lease'],
      [{ lease: Number.NaN }, 'lease'],
      [{ lease: Infinity }, 'lease'],
      [{ lease: '60000' }, 'lease'],
      [{ lease: 366 * 86_400_000 + 1 }, 'lease must be a finite number of milliseconds from 1 to 31,622,400,000, got 31622400001'],
      [{ wait: -500 }, 'wait'],
      [{ wait: Number.NaN }, 'wait'],
      [{ wait: Infinity }, 'wait'],
      [{ outputTtl: -5000 }, 'outputTtl'],
      [{ outputTtl: Number.NaN }, 'outputTtl'],
      [{ overwrite: 'yes' }, 'overwrite'],
      [{ autoRefresh: 1 }, 'autoRefresh'],
    ];
    for (const [options, field] of cases) {
      const onAcquire = await rejection(() => r.job('job', { outputs: [out] }).acquire(options));
      expect(onAcquire.code, JSON.stringify(options)).toBe('INVALID_ARGUMENT');
      expect(onAcquire.message).toContain(field);
      expect((await rejection(() => r.acquire('job', { outputs: [out], ...options }))).code).toBe('INVALID_ARGUMENT');
    }
    expect((await rejection(() => r.produce(out, { ttl: -1000 }))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(() => c.session.taskrow.resources({ history: 'no' as unknown as boolean }))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(() => r.edges({ after: 'yesterday' as unknown as Date }))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(() => r.downstream('x', { depth: 0 }))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(() => r.forceRelease(null as unknown as object))).code).toBe('INVALID_ARGUMENT');
    expect(await allRows(c)).toBe(before);
  });

  it('rejects adding keys after acquire, acquiring twice, releasing twice and refreshing when not held', async () => {
    const c = ctx() as SuiteContext<unknown>;
    const r = c.session.taskrow.resources();
    const [out, extra] = [freshName('once.'), freshName('extra.')];
    const job = r.job('once', { outputs: [out] });
    expect((await rejection(job.release())).message).toContain('holds no locks');
    expect((await rejection(job.refresh())).code).toBe('INVALID_ARGUMENT');
    await job.acquire();
    expect((await rejection(() => job.addInputs(extra))).message).toContain('before acquire()');
    expect((await rejection(() => job.addOutputs(extra))).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(job.acquire())).code).toBe('INVALID_ARGUMENT');
    expect((await rejection(job.canRun())).code).toBe('INVALID_ARGUMENT');
    expect(job.outputs).toEqual([out]);
    expect((await probeLocks(c.session.probe, c.prefix, [out, extra])).map((l) => l.key)).toEqual([out]);
    await job.release({ failed: true });
    const twice = await rejection(job.release());
    expect(twice.code).toBe('INVALID_ARGUMENT');
    expect(twice.message).toContain('released twice');
    expect((await rejection(job.release({ failed: 'yes' as unknown as boolean }))).code).toBe('INVALID_ARGUMENT');
    job.addInputs(extra); // allowed again once released
    expect(job.inputs).toEqual([extra]);
  });

  it('refuses a misspelt option of every Resources function before any SQL, naming it and the accepted names', async () => {
    const { session, prefix } = ctx();
    const out = freshName('out.');
    const before = await probeRowCounts(session.probe, prefix);
    await refusesOption(() => session.taskrow.resources({ histroy: false } as never), 'histroy', ['history', 'releaseOnExit']);
    const r = session.taskrow.resources({ releaseOnExit: false });
    await refusesOption(() => r.job('j', { outputs: [out], autoRefesh: true } as never), 'autoRefesh', ['autoRefresh', 'lease', 'wait', 'inputs', 'outputs']);
    await refusesOption(() => r.acquire('j', { outputs: [out], wate: 1 } as never), 'wate', ['wait']);
    await refusesOption(() => r.job('j', { outputs: [out] }).acquire({ leese: 5 } as never), 'leese', [
      'lease',
      'wait',
      'overwrite',
      'outputTtl',
      'autoRefresh',
    ]);
    await refusesOption(() => r.job('j', { outputs: [out] }).canRun({ overwrit: false } as never), 'overwrit', ['overwrite']);
    await refusesOption(() => r.produce(out, { tll: 1 } as never), 'tll', ['ttl', 'by']);
    await refusesOption(() => r.forceRelease({ output: [out] } as never), 'output', ['inputs', 'outputs']);
    await refusesOption(() => r.edges({ afer: new Date() } as never), 'afer', ['after', 'before']);
    await refusesOption(() => r.downstream(out, { dept: 1 } as never), 'dept', ['after', 'before', 'depth']);
    expect(await probeRowCounts(session.probe, prefix)).toEqual(before);
    expect(await probeLocks(session.probe, prefix, [out])).toEqual([]);
    const job = await r.acquire('j', { outputs: [out] });
    await refusesOption(() => job.release({ faild: true } as never), 'faild', ['failed']);
    expect(job.held).toBe(true);
    await job.release({ failed: true });
  });

  it('leaves nothing behind when acquire fails on a closed client', async () => {
    const c = ctx() as SuiteContext<unknown>;
    const extra = await c.openExtra();
    const out = freshName('closed.');
    const before = await allRows(c);
    await extra.endClient();
    const err = await rejection(extra.taskrow.resources().acquire('closed', { outputs: [out] }));
    expect(err.code).toBe('CLIENT_CLOSED');
    expect(await allRows(c)).toBe(before);
  });
}
