import { receiptsTable } from '../../receipts/tables.js';
import type { Dialect } from '../../dialect.js';
import { table } from '../../tables.js';

/** The Queue's tables under one prefix: every queue's jobs, keyed by queue name, and the receipts of enqueues. */
export interface QueueTables {
  readonly jobs: string;
  readonly receipts: string;
  /** Dedup keys of dead jobs, for `retryDead()` (see `dead-keys.ts`). */
  readonly deadKeys: string;
  /** One row per dedup key, naming the job that took it last (see `dedup.ts`). */
  readonly dedup: string;
  /** One row per queue with fleet-wide state: paused (see `pause.ts`). */
  readonly queues: string;
  /** Where the last claim of a queue that held its claim lock ended its read (see `claim/call.ts`). */
  readonly cursors: string;
  /** One row per concurrency key in use, locked while its running jobs are counted (see `limits.ts`). */
  readonly keys: string;
  /** One row per keyed job admitted (ready or running) or blocked, by key (see `key-slots.ts`). */
  readonly keyed: string;
  /** Rate-limited queues: one row per start their window allows (see `rate.ts`). */
  readonly rateSlots: string;
  /** The doorbell's guard rows and (uncommitted) registrations of sleeping connections (see `doorbell.ts`). */
  readonly sleepers: string;
  /** The procedure that enqueues one job in one statement (see `enqueue/call.ts`). */
  readonly enqueueCall: string;
  /** The procedure that enqueues a batch of jobs in one statement (see `enqueue/many-call.ts`). */
  readonly enqueueManyCall: string;
  /** The procedure that claims ready jobs in one statement (see `claim/call.ts`). */
  readonly claimCall: string;
  /** The procedure that enqueues one job, rings its queue's doorbell and hands the job to a sleeper, in one statement (see `handoff/hand-call.ts`). */
  readonly enqueueHandCall: string;
  /** The procedure that enqueues a batch leased to a worker of the enqueuing process when a claim would take it now (see `local-hand.ts`). */
  readonly enqueueLeaseCall: string;
}

export function queueTables(prefix: string): QueueTables {
  return {
    jobs: table(prefix, 'queue_jobs'),
    receipts: receiptsTable(prefix),
    deadKeys: table(prefix, 'queue_dead_keys'),
    dedup: table(prefix, 'queue_dedup'),
    queues: table(prefix, 'queues'),
    cursors: table(prefix, 'queue_cursors'),
    keys: table(prefix, 'queue_keys'),
    keyed: table(prefix, 'queue_keyed'),
    rateSlots: table(prefix, 'queue_rate_slots'),
    sleepers: table(prefix, 'queue_sleepers'),
    enqueueCall: table(prefix, 'enqueue_job'),
    enqueueManyCall: table(prefix, 'enqueue_jobs'),
    claimCall: table(prefix, 'claim_jobs'),
    enqueueHandCall: table(prefix, 'enqueue_job_and_hand'),
    enqueueLeaseCall: table(prefix, 'enqueue_jobs_leased'),
  };
}

/**
 * Where a job is in its life, stored in `phase` (the second column of every claim index, so the
 * rows of one phase are one contiguous index range and claims never read finished or dead rows).
 */
export const PHASE = {
  /** Due and claimable; `due_at` is the time it became due (its place in line). */
  ready: 0,
  /** Scheduled for later (delay, runAt, retry backoff); `due_at` is when it becomes ready. */
  delayed: 1,
  /** Leased to a worker; `due_at` is the lease expiry. */
  running: 2,
  /** Finished and kept (`keepFinishedFor`); `due_at` is when it may be purged. */
  done: 3,
  /** Failed `max_attempts` times; `due_at` is when it died. Kept until `retryDead` or `purgeDead`. */
  dead: 4,
  /**
   * Waiting for a slot of its concurrency key (the key had its limit of ready and running jobs);
   * out of every range a claim reads. A job of the key that leaves the ready and running phases
   * admits the first blocked one (see `limits.ts`).
   */
  blocked: 5,
} as const;

export type JobState = keyof typeof PHASE;

/** State names by phase number. */
export const STATE_OF: readonly JobState[] = ['ready', 'delayed', 'running', 'done', 'dead', 'blocked'];

export { epochMicros, NOW_MICROS } from '../../sql.js';

/**
 * The rows of one queue (`?`) that a claim makes ready first: delayed jobs that came due and
 * expired leases (one range of the `claim` index per phase).
 */
export const DUE_ROWS = `\`queue\` = ? AND \`phase\` IN (${PHASE.delayed}, ${PHASE.running}) AND \`ready_priority\` = 0 AND \`due_at\` <= UTC_TIMESTAMP(6)`;

/**
 * An SQL expression, 1 when rows of `DUE_ROWS` wait in `jobs` for the queue `queue` (`?`, or a routine's
 * parameter), else 0: one row of
 * their `claim` index ranges, read in the direction in which the server stops at the range end
 * (`Dialect.rangeEndStops`). Read ascending, the range of leases ends where the leases of the jobs
 * completed since the last purge begin (deleted rows: their entries wait for purge), and MariaDB
 * walks every one of them before it finds the range over; read descending, the entries met past
 * its start are the ready and delayed rows, live while there is a backlog. Either way the answer is
 * the same. A plain read: inside a locking read it locks nothing.
 */
export function dueWaiting(jobs: string, rangeEndStops: Dialect['rangeEndStops'], queue = '?'): string {
  const one = `SELECT 1 FROM ${jobs} FORCE INDEX (\`claim\`) WHERE ${DUE_ROWS.replace('?', queue)}`;
  return rangeEndStops === 'ascending' ? `EXISTS (${one})` : `((${one} ORDER BY \`phase\` DESC, \`ready_priority\` DESC, \`due_at\` DESC LIMIT 1) IS NOT NULL)`;
}

/** `UTC_TIMESTAMP(6)` plus `?` microseconds. */
export const NOW_PLUS = 'UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND';

/**
 * Writes by primary key name it as their only access path: with the queue and phase also in the
 * WHERE clause the optimizer may otherwise range-scan the `claim` index, and under REPEATABLE READ
 * lock (and deadlock on) other workers' rows. Single-table DELETE takes no index hint, so deletes
 * use the multi-table form.
 */
export const updateById = (table: string): string => `UPDATE ${table} FORCE INDEX (PRIMARY)`;
export const deleteById = (table: string): string => `DELETE j FROM ${table} AS j FORCE INDEX (PRIMARY)`;
