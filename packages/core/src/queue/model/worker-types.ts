import type { EventEmitter } from 'node:events';
import type { Job } from './types.js';
import type { WorkerEventMap, WorkerLogger } from './events.js';

/** What a handler gets besides the job. */
export interface JobContext {
  /**
   * Fires when the job's lease is lost (another worker may now run it) or when `stop()`'s timeout
   * passes before the handler finished (the job is then released). Its `reason` says which.
   */
  readonly signal: AbortSignal;
  /** Stores the job's progress (`Queue.progress`); rejects with `LEASE_LOST` once the lease is lost. */
  progress(value: unknown): Promise<void>;
}

/**
 * Runs one job. Resolving completes it (what it resolves to is stored as the job's `result` when
 * finished jobs are kept), throwing fails it (retry with backoff, or dead; at once for an
 * `UnrecoverableError`). A handler
 * that acks the job itself (for example `tr.in(tx).queue(name).complete(job)` inside its own
 * transaction, so the ack commits with its writes) is left alone by the worker.
 */
export type JobHandler<Payload> = (job: Job<Payload>, context: JobContext) => unknown;

/** How a worker runs. */
export interface WorkerOptions {
  /** Handlers running at once; 1 to 1000, default 1. */
  readonly concurrency?: number;
  /**
   * Jobs per claim; 1 to 1000, default `concurrency`. A worker holds at most this many claimed
   * jobs that have not started; their leases are extended while they wait.
   */
  readonly batchSize?: number;
  /** Lease in milliseconds; extended while a job runs (at half-life). Default 30,000. */
  readonly lease?: number;
  /** Longest wait between claims while the queue is idle, in milliseconds; default 1,000. */
  readonly pollInterval?: number;
  /**
   * Sleep on the queue's doorbell (default false): an enqueue that commits in another process on
   * the same server wakes this worker within milliseconds instead of at its next poll. Takes one
   * pooled connection per process and queue while any such worker runs (in `SELECT SLEEP(1)`);
   * enqueuers interrupt it with `KILL QUERY`, so they MUST connect as the same user (or one allowed
   * to kill its queries). Needs a pool with a connection to spare, not a single connection.
   */
  readonly doorbell?: boolean;
  /** Claim only jobs of this group. */
  readonly group?: string;
  /**
   * Called with errors the worker recovers from (database unreachable, ...), as is the `error`
   * event and the logger. When none of the three is set, such errors go to `console.error`.
   */
  readonly onError?: (error: unknown) => void;
  /** A logger with pino's interface; the worker logs claims (debug), failures (warn, error), lost leases (warn). Default: none. */
  readonly logger?: WorkerLogger;
}

/** What `stop()` did. */
export interface StopResult {
  /** Jobs given back unstarted or unfinished. */
  readonly released: number;
}

/** Counters of a worker since it started. */
export interface WorkerCounts {
  readonly completed: number;
  readonly failed: number;
  /** Jobs whose lease was lost while this worker held them. */
  readonly lost: number;
}

/** A running worker: an `EventEmitter` of `WorkerEventMap` (`worker.on('dead', (job, err) => ...)`). */
export interface QueueWorker<P = unknown> extends EventEmitter<WorkerEventMap<P>> {
  /**
   * Stops claiming, gives back the claimed jobs that have not started, waits up to `timeout`
   * milliseconds (default 30,000) for running handlers, then aborts the rest (their signal fires) and
   * gives them back. Resolves once every ack has been written and, when it was the process's
   * last doorbell worker of the queue, once the doorbell's sleeping connection is back in the pool
   * (its sleep lasts at most a second). Safe to call twice.
   */
  stop(options?: { timeout?: number }): Promise<StopResult>;
  readonly counts: WorkerCounts;
}
