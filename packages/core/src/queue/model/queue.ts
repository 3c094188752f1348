import type {
  ClaimOptions,
  EnqueueItem,
  EnqueueOptions,
  Enqueued,
  FailOutcome,
  Job,
  JobInfo,
  JobOutcome,
  JobPage,
  JobRef,
  QueueListOptions,
  QueueStats,
  RetentionOptions,
} from './types.js';
import type { QueueWorker, WorkerOptions, JobHandler } from './worker-types.js';

/**
 * One named queue. Every method validates its arguments before any SQL runs. All times come from
 * the database clock.
 */
export interface Queue<Payload = unknown> {
  readonly name: string;
  /**
   * Enqueues one job (see `enqueueMany`); resolves after its commit. Outside an application
   * transaction, jobs without a dedup key that the process enqueues to the queue while one such
   * enqueue is in flight leave together, in the order asked, as one batch statement when it returns
   * (up to 32 jobs); a lone one leaves alone. A batch the server refuses is sent again job by job,
   * so each caller sees its own job's outcome.
   */
  enqueue(payload: Payload, options?: EnqueueOptions): Promise<Enqueued>;
  /**
   * Enqueues a batch in one transaction: all jobs or none. Resolves to one entry per item, in
   * order. Inside `taskrow.in(tx)` the jobs commit or roll back with the application's transaction.
   */
  enqueueMany(items: Iterable<EnqueueItem<Payload>>): Promise<Enqueued[]>;
  /**
   * Claims up to `limit` runnable jobs: ready ones by priority, then due time, then id; due
   * delayed jobs and expired leases are made ready first (an expired lease whose attempts are used
   * up makes its job dead). Each claimed job gets a lease of `lease` milliseconds by the database clock,
   * its attempt counted and a new fencing token. MUST hand each job to at most one live lease;
   * MUST NOT wait on rows other claimers or ackers hold (they are skipped). A job with a concurrency
   * key becomes ready only within its key's limit (the others turn `blocked`); a rate-limited queue
   * gives no more jobs than it has free rate slots. Resolves to [] when nothing is runnable (or the
   * queue is paused, or no rate slot is free); a claimer that loses every race also sees [].
   */
  claim(options: ClaimOptions): Promise<Job<Payload>[]>;
  /**
   * Completes jobs: deletes them (or keeps them as `done` for `keepFinishedFor`, with `result`, JSON
   * checked like a payload, stored for each of them; a deleted job keeps nothing). Checks each
   * fencing token: jobs whose lease was lost are left alone and the call rejects with a
   * `LeaseLostError` (code `LEASE_LOST`) listing them, after completing the rest.
   */
  complete(jobs: JobRef | readonly JobRef[], options?: { result?: unknown }): Promise<void>;
  /**
   * Stores `value` (JSON, checked like a payload) as the job's progress, readable through
   * `getJob` and `list`. Fenced like every ack: rejects with `LEASE_LOST`, storing nothing, when the
   * lease is no longer the caller's.
   */
  progress(job: JobRef, value: unknown): Promise<void>;
  /**
   * Resolves once job `id` of this queue finished: `done` with its result (when finished jobs are
   * kept), `dead` with its last error, or `gone` (see `JobOutcome`). Polls `getJob` (10 ms,
   * doubling up to 500 ms). Rejects with `TIMEOUT` after `timeout` milliseconds, or with the signal's
   * reason when `signal` aborts. Read-only.
   */
  waitFor(id: number, options?: { timeout?: number; signal?: AbortSignal }): Promise<JobOutcome>;
  /**
   * Fails a job: it runs again after an exponential backoff with jitter (or `retryIn` milliseconds),
   * or, once its attempts are used up, becomes `dead` keeping `error` as its last error. With
   * `retry: false` (the default when `error` is an `UnrecoverableError`) it is dead at once,
   * whatever attempts it has left; `retry: false` with `retryIn` is refused. Rejects with
   * `LEASE_LOST` when the lease is no longer the caller's.
   */
  fail(job: JobRef, error: unknown, options?: { retryIn?: number; retry?: boolean }): Promise<FailOutcome>;
  /**
   * Gives jobs back without counting the attempt: they are ready again in their old place in line
   * (or after `delay` milliseconds). Same lease checks and errors as `complete`.
   */
  release(jobs: JobRef | readonly JobRef[], options?: { delay?: number }): Promise<void>;
  /**
   * Extends leases to `ms` milliseconds from now (heartbeat). Resolves to the new expiry. Same
   * lease checks and errors as `complete`: a lost lease is never revived.
   */
  extend(jobs: JobRef | readonly JobRef[], ms: number): Promise<Date>;
  /**
   * Deletes jobs that have not started: ready, delayed (waiting to run or to retry) or blocked
   * behind their concurrency key. A running, finished or dead job, another queue's job and an
   * unknown id are left alone (a running job ends through its worker's ack). A removed job frees
   * its dedup key and its concurrency key's slot: the key's next blocked job is admitted in the
   * same transaction. Takes one id or up to 1,000; resolves to the number removed. Inside
   * `tr.in(tx)` it commits with the application's transaction. A call retried after a lost reply
   * counts only what its own run removed.
   */
  remove(ids: number | readonly number[]): Promise<number>;
  /**
   * Makes delayed jobs (waiting for their run time or for a retry) due now: one without a
   * concurrency key becomes ready at the end of its priority's line; one with a key comes due for
   * the next claim to admit. Other jobs and unknown ids are left alone. Takes one id or up to
   * 1,000; resolves to the number promoted, and wakes idle workers of this process. A call retried
   * after a lost reply counts only what its own run promoted.
   */
  promote(ids: number | readonly number[]): Promise<number>;
  /**
   * Makes dead jobs ready again with their attempts reset and their dedup keys back: the given ids,
   * or all (up to `limit`). MUST NOT make two live jobs share a dedup key: a dead job whose key a
   * live job holds stays dead and is not counted. Resolves to the number re-driven.
   */
  retryDead(options?: { ids?: readonly number[]; limit?: number }): Promise<number>;
  /**
   * Deletes finished and dead jobs past their retention (see `QueueOptions`): finished jobs past
   * `keepFinishedFor` and beyond the newest `keepFinishedCount`, dead jobs that died `keepDeadFor`
   * ago and beyond the newest `keepDeadCount`. `options` set those three for this call, over the
   * handle's. Workers of a handle with any retention run it about once a minute; a process with no
   * worker can run it from a schedule or `taskrow queue purge`. Resolves to the number deleted.
   */
  purge(options?: RetentionOptions): Promise<number>;
  /** Deletes dead jobs (the given ids, or all). Resolves to the number deleted. */
  purgeDead(options?: { ids?: readonly number[] }): Promise<number>;
  /**
   * Deletes the rows of this queue's concurrency keys that no job holds or waits for a slot of
   * (none ready, running or blocked) and that have no limit of their own (`<prefix>queue_keys`:
   * one row per key ever used). A purged key's row is made again when the key is next used (a
   * delayed or retrying job of it coming due, a new job), with the queue's default limit as
   * before. MUST NOT change a limit in force nor let two admissions of one key overlap (it waits
   * for an admission that holds a key's row). Also deletes the queue's dedup key rows whose job
   * no longer holds them (`<prefix>queue_dedup`: the job finished or died; the next enqueue of
   * the key would take the row over). Workers run it about once a minute per process. Resolves
   * to the number of rows deleted.
   */
  purgeKeys(): Promise<number>;
  /**
   * A page of the queue's jobs, read without locking: states in the order ready, delayed, running,
   * done, dead; within a state in the order of the queue's index (ready jobs in claim order:
   * priority, due time, group, id; the other states by their `dueAt`). Each page is one index
   * range read per state, however many jobs the queue holds. Pages are not a snapshot: a job that
   * changes state or time between two pages may be listed twice or not at all.
   */
  list(options?: QueueListOptions): Promise<JobPage<Payload>>;
  /** One job of this queue by id, in any state, or null when there is none (completed and deleted, or never). Read-only. */
  getJob(id: number): Promise<JobInfo<Payload> | null>;
  /** Counts by state, dead count, the oldest runnable job's age and whether the queue is paused. Read-only. */
  stats(): Promise<QueueStats>;
  /**
   * Pauses the queue for every process: from the commit on, `claim()` of this queue returns
   * nothing, so idle workers take nothing at their next poll and busy ones at their next claim (a
   * claim already past its pause check when the pause commits still returns its jobs). Jobs
   * already claimed run on and are acked; enqueues go on. Persisted; idempotent (the first pause
   * time is kept). Inside `tr.in(tx)` it takes effect when the application commits.
   */
  pause(): Promise<void>;
  /** Resumes a paused queue: claims take its jobs again from the commit on. Idempotent. */
  resume(): Promise<void>;
  /** True while the queue is paused (latest committed state). Read-only. */
  isPaused(): Promise<boolean>;
  /**
   * Sets how many jobs of one concurrency key may be ready or running at once, across every
   * process: the queue's default for every key (`key` omitted), or one key's own limit, which wins
   * over the default. `null` removes the setting (the key falls back to the queue default, the
   * queue default to 1). Persisted. A raised limit admits blocked jobs in the same transaction; a
   * lowered one blocks new admissions until enough running jobs finish (none is stopped).
   */
  setConcurrencyLimit(limit: number | null, options?: { key?: string }): Promise<void>;
  /**
   * Limits how many jobs of the queue start (are claimed) in any window of `per` milliseconds, across
   * every process, by the database clock: at most `limit`, however many workers claim. Retries
   * and releases start again and count again. `null` removes the limit. Persisted; takes effect at
   * the commit; a lowered limit holds fully one window later. A claim of a rate-limited queue
   * returns fewer jobs (or none) rather than waiting.
   */
  setRateLimit(rate: { limit: number; per: number } | null): Promise<void>;
  /** The queue's rate limit, or null. Read-only. */
  getRateLimit(): Promise<{ limit: number; per: number } | null>;
  /** The limit in force for `key` (its own, else the queue default, else 1), or the queue default when `key` is omitted. Read-only. */
  getConcurrencyLimit(options?: { key?: string }): Promise<number>;
  /** Starts a worker that runs `handler` for claimed jobs (see `WorkerOptions`). */
  work(handler: JobHandler<Payload>, options?: WorkerOptions): QueueWorker<Payload>;
}
