import type { JobState } from './tables.js';

export type { JobState } from './tables.js';

/** What an ack needs to name a lease: the job, its queue and the fencing token of the claim. */
export interface JobRef {
  readonly id: number;
  readonly queue: string;
  /** The fencing token the claim handed out; every ack checks it. */
  readonly token: number;
}

/** What a claimed job and a listed job both carry. */
export interface JobFields<Payload = unknown> {
  readonly payload: Payload;
  /** Claims counted so far: 0 before the first claim; a claimed job counts its own (1 on the first run). */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly priority: number;
  /** The group given at enqueue, or null. */
  readonly group: string | null;
  /** The concurrency key given at enqueue, or null. */
  readonly concurrencyKey: string | null;
  /** When the job was scheduled to run: its place in line (database clock). */
  readonly runAt: Date;
}

/** A claimed job, leased to the claimer. */
export interface Job<Payload = unknown> extends JobRef, JobFields<Payload> {
  /**
   * When the lease expires (database clock), as of the claim: a lower bound, since the server set
   * the expiry a moment later. `extend()` resolves to the new expiry.
   */
  readonly leaseUntil: Date;
  /**
   * Milliseconds this process may still act as the job's holder, by its own monotonic clock (never
   * the wall clock): counted from when the claim was sent, moved by each confirmed `extend()` of
   * this job object (counted from when the extend was sent; not one inside the application's
   * transaction, which may still roll back), minus a margin of 10% of the lease
   * (50 ms to 5 s). 0 once that time passed and once the job was completed, failed or released.
   * A holder MUST stop the job's side effects at 0: the database may hand the job to another
   * worker soon after, whatever the network or this process's timers did. Not enumerable, so a
   * job still compares and serializes as its fields.
   */
  leaseLeft(): number;
  /**
   * Stores `value` as the job's progress: `queue.progress(job, value)` (JSON checked like a
   * payload; fenced: rejects with `LEASE_LOST`, storing nothing, once the lease is no longer this
   * claim's). Not enumerable.
   */
  progress(value: unknown): Promise<void>;
}

/** How one job is enqueued. */
export interface EnqueueOptions {
  /** Run no earlier than this time. Excludes `delay`. */
  readonly runAt?: Date;
  /** Run no earlier than this many milliseconds from now, by the database clock. Excludes `runAt`. */
  readonly delay?: number;
  /** Lower runs first; -32768 to 32767, default 0. */
  readonly priority?: number;
  /** Claims before the job is dead; 1 to 1000, default the queue's `maxAttempts`. */
  readonly maxAttempts?: number;
  /**
   * While a job with this key is ready, delayed or running in this queue, enqueueing another with
   * the same key does nothing and returns the live job's id. Exact string, at most 4,096 UTF-8 bytes.
   */
  readonly dedupKey?: string;
  /** A group for filtered claims (`claim({ group })`); same rules as queue names. */
  readonly group?: string;
  /**
   * At most the key's limit (`setConcurrencyLimit`; default 1) of this queue's jobs with this key
   * are ready or running at any moment, across every process; the others wait in state `blocked`
   * and are admitted first enqueued first as slots free. Any non-empty string of at most 128
   * characters.
   */
  readonly concurrencyKey?: string;
}

/** One job of a batch: its payload and options. */
export interface EnqueueItem<Payload> extends EnqueueOptions {
  readonly payload: Payload;
}

/** What enqueue did with one job. */
export interface Enqueued {
  readonly id: number;
  /** True when a live job with the same dedup key existed: nothing was added, `id` is that job's. */
  readonly deduplicated: boolean;
}

/** What `claim` is asked for. */
export interface ClaimOptions {
  /** Most jobs to claim, 0 to 1000. */
  readonly limit: number;
  /** Lease length in milliseconds (database clock), more than 0 and at most 7 days (604,800,000). */
  readonly lease: number;
  /** Claim only jobs of this group. */
  readonly group?: string;
}

/** Settings of one queue handle. */
export interface QueueOptions {
  /** Default `maxAttempts` of jobs enqueued through this handle; default 5. */
  readonly maxAttempts?: number;
  /** Retry backoff after `fail`: `base * 2^(attempt - 1)` milliseconds capped at `max`, with jitter. Defaults 1,000 and 3,600,000 (an hour). */
  readonly backoff?: { readonly base?: number; readonly max?: number };
  /**
   * Milliseconds to keep finished jobs (state `done`) before `purge()` deletes them. 0 (the default)
   * deletes a job when it completes.
   */
  readonly keepFinishedFor?: number;
  /** The most finished jobs `purge()` keeps, the newest; default: no limit (only `keepFinishedFor`). */
  readonly keepFinishedCount?: number;
  /** Milliseconds to keep dead jobs before `purge()` deletes them; default: for ever. */
  readonly keepDeadFor?: number;
  /** The most dead jobs `purge()` keeps, the newest; default: no limit. */
  readonly keepDeadCount?: number;
}

/** Retention `purge()` may be given for one call, instead of the handle's (see `QueueOptions`). */
export type RetentionOptions = Pick<QueueOptions, 'keepFinishedCount' | 'keepDeadFor' | 'keepDeadCount'>;

/** What `fail` did. */
export type FailOutcome = { readonly state: 'delayed' /** When it runs again (database clock). */; readonly runAt: Date } | { readonly state: 'dead' };

/** Counts and age of one queue. */
export interface QueueStats {
  readonly queue: string;
  /** Jobs per state; `running` includes expired leases not yet taken back. */
  readonly counts: Readonly<Record<JobState, number>>;
  readonly dead: number;
  /** Milliseconds the oldest runnable job has waited since it became due (database clock); null when none is runnable. */
  readonly oldestRunnableAge: number | null;
  /** When the queue was paused (database clock), or null while it is not paused. */
  readonly pausedAt: Date | null;
}

/** A job as `list()` and `getJob()` show it: any state, read without locking. */
export interface JobInfo<Payload = unknown> extends JobFields<Payload> {
  readonly id: number;
  readonly queue: string;
  readonly state: JobState;
  /**
   * The state's own time (database clock): ready, since when it is due; delayed, when it becomes
   * ready; running, when the lease expires; done, when `purge()` may delete it; dead, when it died.
   */
  readonly dueAt: Date;
  readonly createdAt: Date;
  /** When it completed (kept finished jobs), else null. */
  readonly finishedAt: Date | null;
  /** The error of the last `fail()` (or of an expired last lease), else null. */
  readonly lastError: string | null;
  /** What the job returned (kept finished jobs; see `complete`), else null. */
  readonly result: unknown;
  /** The last value passed to `progress()`, else null. */
  readonly progress: unknown;
}

/**
 * How a job ended, as `waitFor` reports it: `done` (kept finished jobs, with the result), `dead`
 * (with the last error), or `gone`: no such job in the queue any more (completed and deleted, dead
 * and purged, or never enqueued).
 */
export type JobOutcome =
  | { readonly state: 'done'; readonly result: unknown }
  | { readonly state: 'dead'; readonly error: string | null }
  | { readonly state: 'gone' };

/** What `list()` is asked for. */
export interface QueueListOptions {
  /** Only jobs in this state or these states; default every state. */
  readonly state?: JobState | readonly JobState[];
  /** Only jobs of this group. */
  readonly group?: string;
  /** Most jobs per page, 1 to 1000; default 100. */
  readonly limit?: number;
  /** The previous page's `next`: continue after its last job. */
  readonly after?: string;
}

/** A page of `list()`. */
export interface JobPage<Payload = unknown> {
  readonly jobs: JobInfo<Payload>[];
  /** Pass as `after` for the next page; undefined on the last page. */
  readonly next: string | undefined;
}
