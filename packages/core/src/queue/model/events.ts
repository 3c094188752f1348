import type { LeaseLostError } from './errors.js';
import type { FailOutcome, Job } from './types.js';

/** A worker's events and their arguments (`worker.on('completed', (job, result) => ...)`). */
export interface WorkerEventMap<P = unknown> {
  /** A claim took `jobs` (not emitted for claims that found nothing). */
  claimed: [jobs: readonly Job<P>[]];
  /** The job's completion was written; `result` is what the handler resolved to. */
  completed: [job: Job<P>, result: unknown];
  /** The job's failure was written: it runs again (`retrying` follows) or is dead (`dead` follows). */
  failed: [job: Job<P>, error: unknown, outcome: FailOutcome];
  retrying: [job: Job<P>, error: unknown, runAt: Date];
  dead: [job: Job<P>, error: unknown];
  /** The worker stopped holding the job: its lease ended or another claim took it; it is never acked by this worker. */
  leaseLost: [job: Job<P>, reason: LeaseLostError];
  /** An error the worker recovered from (the database unreachable, an ack that failed, ...). */
  error: [error: unknown];
  /** A claim found nothing and no handler is running: the worker waits for work. */
  idle: [];
}

/** A logger with pino's interface (`logger.warn({ jobId }, 'message')`); every method optional. */
export interface WorkerLogger {
  debug?(obj: object, msg?: string): void;
  info?(obj: object, msg?: string): void;
  warn?(obj: object, msg?: string): void;
  error?(obj: object, msg?: string): void;
}

/**
 * `node:diagnostics_channel` names taskrow publishes on, so a tracer (OpenTelemetry or any other)
 * can subscribe without taskrow depending on it: a tracing channel around every handler run
 * (`start`, `end`, `asyncStart`, `asyncEnd`, `error`; context `{ queue, job }`), a plain channel
 * for every claim that took jobs and one for every batch of completions written (both
 * `{ queue, jobs, ms }`: `ms` from sending the transaction to its commit's reply).
 */
export const CHANNELS = Object.freeze({ job: 'taskrow:queue:job', claim: 'taskrow:queue:claim', ack: 'taskrow:queue:ack' });
