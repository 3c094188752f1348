import { TaskrowError } from '../errors.js';
import type { KeyReason, LostReason } from './types.js';

function summary(items: readonly KeyReason<string>[]): string {
  const shown = items.slice(0, 5).map((r) => `${JSON.stringify(r.key.length > 60 ? `${r.key.slice(0, 60)}...` : r.key)}: ${r.reason}`);
  return shown.join(', ') + (items.length > 5 ? `, and ${items.length - 5} more` : '');
}

/** A job could not take its locks within its `wait`. Nothing is held. `reasons` has one entry per blocked key. */
export class ResourceUnavailableError extends TaskrowError {
  override readonly name = 'ResourceUnavailableError';
  readonly job: string;
  readonly reasons: readonly KeyReason[];

  constructor(job: string, reasons: readonly KeyReason[], waited: number) {
    super('RESOURCE_UNAVAILABLE', `job ${JSON.stringify(job)} could not take its locks after ${waited.toFixed(3)} s: ${summary(reasons)}`);
    this.job = job;
    this.reasons = reasons;
  }
}

/** Locks of a job were lost (lease passed, or forced free); `lost` names them. */
export class ResourceLockLostError extends TaskrowError {
  override readonly name = 'ResourceLockLostError';
  readonly job: string;
  readonly lost: readonly KeyReason<LostReason>[];

  constructor(job: string, lost: readonly KeyReason<LostReason>[], what: string, options?: { cause?: unknown }) {
    super('LEASE_LOST', `job ${JSON.stringify(job)} ${what}${lost.length > 0 ? `: ${summary(lost)}` : ''}`, options);
    this.job = job;
    this.lost = lost;
  }
}
