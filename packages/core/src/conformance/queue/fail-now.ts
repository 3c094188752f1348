import { expect, it } from 'vitest';
import { UnrecoverableError } from '../../queue/model/errors.js';
import { rejection } from '../expect.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeJob, until } from './probe.js';
import { refusesOption } from './strict.js';

/** Failing a job without a retry: `fail(job, error, { retry: false })` and `UnrecoverableError`. */
export function queueFailNow<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('fail(job, error, { retry: false }) makes a job dead on its first attempt of five, its dedup key kept for retryDead', async () => {
    const { session, prefix } = ctx();
    const q = session.taskrow.queue(freshName('q'), { maxAttempts: 5 });
    const { id } = await q.enqueue('x', { dedupKey: 'k' });
    const [job] = await q.claim({ limit: 1, lease: 60_000 });
    expect(await q.fail(job!, new Error('bad input'), { retry: false })).toEqual({ state: 'dead' });
    expect(await probeJob(session.probe, prefix, id)).toMatchObject({ state: 'dead', attempt: 1, maxAttempts: 5, dedup: null });
    expect((await probeJob(session.probe, prefix, id))!.lastError).toContain('bad input');
    expect(await q.retryDead({ ids: [id] })).toBe(1);
    expect(await probeJob(session.probe, prefix, id)).toMatchObject({ state: 'ready', dedup: 'k' });
  });

  it('an UnrecoverableError passed to fail() or thrown by a handler kills the job at once; retry: true overrides it', async () => {
    const { session, prefix } = ctx();
    const q = session.taskrow.queue<string>(freshName('q'), { maxAttempts: 5 });
    const [a, b, c] = await q.enqueueMany([{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }]);
    const [ja, jb] = await q.claim({ limit: 2, lease: 60_000 });
    expect(await q.fail(ja!, new UnrecoverableError('gone for good'))).toEqual({ state: 'dead' });
    expect((await q.fail(jb!, new UnrecoverableError('try again anyway'), { retry: true })).state).toBe('delayed');
    expect(await probeJob(session.probe, prefix, b!.id)).toMatchObject({ state: 'delayed', attempt: 1 });
    const w = q.work(
      async (job) => {
        throw new UnrecoverableError(`cannot handle ${job.payload}`);
      },
      { pollInterval: 50 },
    );
    await until('the worker failed c', () => w.counts.failed === 1);
    await w.stop();
    expect(await probeJob(session.probe, prefix, a!.id)).toMatchObject({ state: 'dead', attempt: 1, lastError: expect.stringContaining('gone for good') });
    expect(await probeJob(session.probe, prefix, c!.id)).toMatchObject({ state: 'dead', attempt: 1, lastError: expect.stringContaining('cannot handle c') });
  });

  it('refuses retry: false with retryIn, a non-boolean retry and a misspelt option, changing nothing', async () => {
    const { session, prefix } = ctx();
    const q = session.taskrow.queue(freshName('q'));
    const { id } = await q.enqueue('x');
    const [job] = await q.claim({ limit: 1, lease: 60_000 });
    expect((await rejection(q.fail(job!, 'e', { retry: false, retryIn: 5000 }), 'INVALID_ARGUMENT')).message).toContain('retryIn');
    expect((await rejection(q.fail(job!, 'e', { retry: 'no' as never }), 'INVALID_ARGUMENT')).message).toContain('"no"');
    await refusesOption(() => q.fail(job!, 'e', { retyr: false } as never), 'retyr', ['retryIn', 'retry']);
    expect(await probeJob(session.probe, prefix, id)).toMatchObject({ state: 'running', attempt: 1 });
    await q.complete(job!);
  });
}
