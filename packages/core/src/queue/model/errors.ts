import { TaskrowError } from '../../errors.js';

/**
 * An ack named jobs whose lease is no longer the caller's: the lease expired and the job was taken
 * back (and perhaps claimed, completed or failed by another worker), the job was already acked, or
 * it was released. Code `LEASE_LOST`. A batch ack applies every job still held and then rejects
 * with this error: `lost` lists the ids left alone, `applied` the ids acked.
 */
export class LeaseLostError extends TaskrowError {
  override readonly name = 'LeaseLostError';
  readonly lost: readonly number[];
  readonly applied: readonly number[];

  constructor(action: string, lost: readonly number[], applied: readonly number[], why?: string) {
    const list = lost.length > 10 ? `${lost.slice(0, 10).join(', ')}, ... (${lost.length} in all)` : lost.join(', ');
    super(
      'LEASE_LOST',
      `could not ${action} job${lost.length === 1 ? '' : 's'} ${list}: ` +
        (why ?? 'the lease is no longer held by this claim (it expired and the job was taken back, or the job was already acked or released)') +
        (applied.length > 0 ? `; ${applied.length} other job(s) were acked` : ''),
    );
    this.lost = lost;
    this.applied = applied;
  }
}

/**
 * Thrown by a worker's handler (or passed to `fail()`), fails the job without a retry: it is dead at
 * once, whatever attempts it has left, with this error as its last error (BullMQ's
 * `UnrecoverableError`). Not a `TaskrowError`: the application throws it, taskrow never does.
 */
export class UnrecoverableError extends Error {
  override readonly name: string = 'UnrecoverableError';
}
