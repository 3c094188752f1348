import type { Dialect } from '../../dialect.js';
import { dueWaiting, PHASE, type QueueTables } from './tables.js';

/**
 * The claim gate and the lease, written once: is the queue paused, rate-limited, holding a ready job, holding due
 * jobs to make ready first? Each read is a plain read of an index (inside a locking read it locks
 * nothing). `queue` is the SQL that names the queue: `?` in a client's statement (one parameter per
 * read), `p_queue` in a stored routine.
 */

/** 1 while the queue is paused. */
export const pausedSql = (t: QueueTables, queue: string): string =>
  `EXISTS (SELECT 1 FROM ${t.queues} WHERE \`queue\` = ${queue} AND \`paused_at\` IS NOT NULL)`;

/** 1 while the queue is rate-limited (its rate slots exist). */
export const ratedSql = (t: QueueTables, queue: string): string => `EXISTS (SELECT 1 FROM ${t.rateSlots} WHERE \`queue\` = ${queue})`;

/** 1 while a job of the queue is ready (of group `?` too, with `grouped`: one more parameter). */
export const readySql = (t: QueueTables, queue: string, grouped = false): string =>
  `EXISTS (SELECT 1 FROM ${t.jobs} FORCE INDEX (\`claim\`) WHERE \`queue\` = ${queue} AND \`phase\` = ${PHASE.ready}${grouped ? ' AND `grp` = ?' : ''})`;

/** 1 while due jobs of the queue wait to be made ready (see `dueWaiting`). */
export const dueSql = (t: QueueTables, stops: Dialect['rangeEndStops'], queue: string): string => dueWaiting(t.jobs, stops, queue);

/**
 * 1 when a claim of the queue would take a new ready job now: not paused, not rate-limited, no job
 * ready before it, no due jobs to make ready first. Where an enqueue may lease its new jobs to a
 * worker instead of making them ready (the hand-offs).
 */
export const takesNewJobNowSql = (t: QueueTables, stops: Dialect['rangeEndStops'], queue: string): string =>
  `NOT ${pausedSql(t, queue)}
        AND NOT ${ratedSql(t, queue)}
        AND NOT ${readySql(t, queue)}
        AND NOT ${dueSql(t, stops, queue)}`;

/** A lease's expiry: `lease` microseconds after `now` (SQL each; the database clock). */
export const leaseEnd = (lease: string, now = 'UTC_TIMESTAMP(6)'): string => `${now} + INTERVAL ${lease} MICROSECOND`;

/**
 * The SET list of a claim's lease, written once for the client's claim and the claim procedure:
 * expiry `lease` microseconds from now (database clock), one more attempt, fencing token `token`,
 * running. `lease` and `token` are SQL: `?` each in a client's statement, in that order.
 */
export const leaseSet = (lease: string, token: string): string =>
  `\`due_at\` = ${leaseEnd(lease)}, \`attempt\` = \`attempt\` + 1, \`token\` = ${token}, \`ready_priority\` = 0, \`phase\` = ${PHASE.running}`;
