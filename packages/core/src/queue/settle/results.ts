import type { Executor } from '../../engine/executor.js';
import { TaskrowError } from '../../errors.js';
import { msArg, optionsOf } from '../../validate.js';
import { fence } from './ack.js';
import { LeaseLostError } from '../model/errors.js';
import { encodePayload } from '../model/payload.js';
import { updateById, type QueueTables } from '../model/tables.js';
import type { JobInfo, JobOutcome, JobRef } from '../model/types.js';

/**
 * Stores `value` (JSON, checked like a payload before any SQL) as the job's progress, fenced like
 * every ack: rejects with `LEASE_LOST` when the lease is no longer the caller's, storing nothing.
 * Writing the same value again is harmless, so a retry after a lost reply is exact.
 */
export async function reportProgress(exec: Executor, t: QueueTables, queue: string, ref: JobRef, value: unknown): Promise<void> {
  const text = encodePayload(value, 'progress()');
  const f = fence(queue, [ref]);
  const res = await exec.query(`${updateById(t.jobs)} SET \`progress\` = ? WHERE ${f.sql}`, [text, ...f.params]);
  if (res.affectedRows !== 1) throw new LeaseLostError('report progress of', [ref.id], []);
}

/** Polls start every 10 ms and double up to this (ms). */
const MAX_POLL_MS = 500;

/** What `waitFor` is asked. */
export interface WaitForArgs {
  readonly timeoutMs: number | undefined;
  readonly signal: AbortSignal | undefined;
}

/** Validated `waitFor()` options. MUST throw before any SQL on bad input. */
export function waitForArgs(options: unknown): WaitForArgs {
  const o = optionsOf('waitFor()', options ?? {}, ['timeout', 'signal']);
  const signal = o['signal'];
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TaskrowError('INVALID_ARGUMENT', 'waitFor() signal must be an AbortSignal');
  return {
    timeoutMs: o['timeout'] === undefined ? undefined : msArg('waitFor() timeout', o['timeout'], 1, 365 * 24 * 3600 * 1000),
    signal: signal as AbortSignal | undefined,
  };
}

/** The outcome of a finished job as `getJob` shows it, or undefined while it is still live. */
function outcomeOf(job: JobInfo | null): JobOutcome | undefined {
  if (job === null) return { state: 'gone' };
  if (job.state === 'done') return { state: 'done', result: job.result };
  if (job.state === 'dead') return { state: 'dead', error: job.lastError };
  return undefined;
}

/**
 * Polls `get` (10 ms, doubling up to 500 ms) until the job finished: done, dead, or gone. Rejects
 * with `TIMEOUT` after `timeoutMs`, or with the signal's reason when it aborts; no poll is left
 * running either way.
 */
export async function waitForJob(id: number, get: () => Promise<JobInfo | null>, args: WaitForArgs): Promise<JobOutcome> {
  const started = performance.now();
  args.signal?.throwIfAborted();
  for (let delay = 10; ; delay = Math.min(MAX_POLL_MS, delay * 2)) {
    const outcome = outcomeOf(await get());
    if (outcome) return outcome;
    const left = args.timeoutMs === undefined ? Infinity : args.timeoutMs - (performance.now() - started);
    if (left <= 0) throw new TaskrowError('TIMEOUT', `job ${id} did not finish within the waitFor() timeout of ${args.timeoutMs! / 1000} s`);
    await sleep(Math.min(delay, left), args.signal);
  }
}

/** Sleeps `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}
