import { expect, it } from 'vitest';
import { ResourceLockLostError } from '../../resources/errors.js';
import { releaseAllHeld, shutdownListener } from '../../resources/shutdown.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { liveLocks, probeExisting, probeLocks } from './probe.js';

/** The scoped form (jobs.py's decorator and context manager), lost-lock signals and shutdown. */
export function resourcesScoped<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('run() holds the locks while the function runs and marks outputs when it returns', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [inp, out] = [freshName('in.'), freshName('out.')];
    await r.produce(inp);
    const result = await r.run('scoped', { inputs: [inp], outputs: [out] }, async (job, signal) => {
      expect(job.held).toBe(true);
      expect(signal.aborted).toBe(false);
      expect(await liveLocks(session.probe, prefix, [inp, out])).toEqual([`${inp}:reader`, `${out}:writer`].sort());
      return 42;
    });
    expect(result).toBe(42);
    expect(await probeLocks(session.probe, prefix, [inp, out])).toEqual([]);
    expect(await probeExisting(session.probe, prefix, [out])).toEqual([out]);
  });

  it('run() releases as failed and rethrows when the function throws', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const out = freshName('out.');
    const boom = new Error('boom');
    const job = r.job('throws', { outputs: [out] });
    await expect(job.run(() => Promise.reject(boom))).rejects.toBe(boom);
    expect(job.held).toBe(false);
    expect(await probeLocks(session.probe, prefix, [out])).toEqual([]);
    expect(await probeExisting(session.probe, prefix, [out])).toEqual([]);
  });

  it('run() leaves an explicit release inside the function alone', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const out = freshName('out.');
    await r.run('explicit', { outputs: [out] }, (job) => job.release({ failed: true }));
    expect(await probeLocks(session.probe, prefix, [out])).toEqual([]);
    expect(await probeExisting(session.probe, prefix, [out])).toEqual([]);
  });

  it('aborts the signal when a lock is lost, and then refuses to mark outputs', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const out = freshName('out.');
    let reason: unknown;
    const err = await r
      .run('lost', { outputs: [out] }, async (job, signal) => {
        signal.addEventListener('abort', () => (reason = signal.reason));
        expect(await r.forceRelease({ outputs: [out] })).toBe(1);
        await job.refresh();
        expect(signal.aborted).toBe(true);
        return 'finished anyway';
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(reason).toBeInstanceOf(ResourceLockLostError);
    expect((reason as ResourceLockLostError).lost).toEqual([{ key: out, reason: 'output_lock_lost' }]);
    expect(err).toBeInstanceOf(ResourceLockLostError);
    expect(await probeExisting(session.probe, prefix, [out])).toEqual([]);
    expect(await probeLocks(session.probe, prefix, [out])).toEqual([]);
  });

  it('installs process listeners only while locks are held, and releases as failed on SIGTERM', async () => {
    const { session, prefix } = ctx();
    const r = session.taskrow.resources();
    const [inp, out] = [freshName('in.'), freshName('out.')];
    await r.produce(inp);
    await releaseAllHeld(); // a job left held by an earlier failed test would skew the counts below
    const before = process.listenerCount('SIGTERM');
    expect(shutdownListener('SIGTERM')).toBeUndefined();
    const job = await r.acquire('shutdown', { inputs: [inp], outputs: [out] });
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    expect(process.listenerCount('beforeExit')).toBeGreaterThan(0);
    const listener = shutdownListener('SIGTERM');
    expect(listener).toBeDefined();
    // Another SIGTERM listener stands for the application's own: taskrow then does not re-raise.
    const appListener = (): void => undefined;
    process.on('SIGTERM', appListener);
    try {
      await listener!();
    } finally {
      process.removeListener('SIGTERM', appListener);
    }
    expect(job.held).toBe(false);
    expect(job.signal.aborted).toBe(true);
    expect(await probeLocks(session.probe, prefix, [inp, out])).toEqual([]);
    expect(await probeExisting(session.probe, prefix, [out])).toEqual([]);
    expect(process.listenerCount('SIGTERM')).toBe(before);
    expect(shutdownListener('SIGTERM')).toBeUndefined();
  });

  it('keeps no process listeners when releaseOnExit is false', async () => {
    const { session } = ctx();
    const r = session.taskrow.resources({ releaseOnExit: false });
    await releaseAllHeld(); // with taskrow's listeners already installed, this case would prove nothing
    expect(shutdownListener('SIGTERM')).toBeUndefined();
    const before = process.listenerCount('SIGTERM');
    const job = await r.acquire('no-hooks', { outputs: [freshName('out.')] });
    expect(job.held).toBe(true);
    expect(shutdownListener('SIGTERM')).toBeUndefined();
    expect(process.listenerCount('SIGTERM')).toBe(before);
    await job.release({ failed: true });
  });
}
