import { performance } from 'node:perf_hooks';
import { leaseMargin } from '../../engine/deadline.js';
import type { JobRef } from './types.js';

/**
 * What taskrow knows of a job object it handed out: where its lease ends on this process's
 * monotonic clock, and whether it was settled (completed, failed or released) through taskrow.
 * Both are tags on the object (weak: they go with it), read by the worker, the claim and the acks.
 */

/** Job objects acked through taskrow (completed, failed or released): acking one again is a caller error. */
const settled = new WeakSet<object>();

/** True when `ref` was completed, failed or released through taskrow. */
export function isSettled(ref: JobRef): boolean {
  return settled.has(ref);
}

/** Marks `refs` acked: a job object acked once cannot be acked again (see `isSettled`). */
export function markSettled(refs: readonly JobRef[]): void {
  for (const r of refs) settled.add(r);
}

/** Where each claimed job's lease ends on this process's monotonic clock (`performance.now()`), by job object. */
const ends = new WeakMap<object, number>();

/**
 * Records that the claim or extend that gave `job` a lease of `leaseMs` was sent at `sentAt`
 * (`performance.now()`) and was confirmed. The database started that lease no earlier than the
 * send, so the local end (`sentAt + leaseMs` minus `leaseMargin`) comes before the database's. A
 * confirmed extend proves no one else took the job meanwhile (any claim changes its token), so it
 * may move the end forward again; it never moves it back.
 */
export function leaseConfirmed(job: JobRef, sentAt: number, leaseMs: number): void {
  const end = sentAt + leaseMs - leaseMargin(leaseMs);
  const before = ends.get(job);
  if (before === undefined || end > before) ends.set(job, end);
}

/**
 * Milliseconds the holder of `job` may still act on its lease, on the local monotonic clock; 0
 * once that time passed, once the job was completed, failed or released through taskrow, and for
 * a job object taskrow did not hand out. See `Job.leaseLeft`.
 */
export function leaseLeft(job: JobRef): number {
  if (isSettled(job)) return 0;
  const end = ends.get(job);
  return end === undefined ? 0 : Math.max(0, end - performance.now());
}
