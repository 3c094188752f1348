import type { RoutineDialect } from '../../dialect.js';
import { takesNewJobNowSql } from '../model/gate.js';
import { commitWithReceiptInto, ENQUEUE_JOB_PARAMS, inParams, insertJob, PARAM_JOB } from '../enqueue/call.js';
import { leasedValues } from '../enqueue/insert.js';
import { countRingSql, KILL_SLEEPERS, sleepersSql } from '../wake/ring-sql.js';
import { PHASE, type QueueTables } from '../model/tables.js';
import type { Routine } from '../routines/routine.js';

/**
 * The hand-off: a producer's enqueue that rings the doorbell leases its new job to a sleeper able to
 * run it, so the woken process reads its job instead of claiming it (see `doorbell.ts`). A sleeper
 * whose process has a worker with a free handler slot and no group filter registers a fencing
 * token (new for each sleep) and that worker's lease length; the enqueue, in its transaction that
 * holds the queue's guard row, inserts the job leased to the first such registration when a claim
 * of the queue would take that job now (nothing else ready, no due jobs to make ready first, the
 * queue neither paused nor rate-limited, the job ready) and interrupts that sleeper first. The
 * sleeper takes the guard row before its registration ends, so it always finds what was handed to it.
 */

/** Whether a claim of `p_queue` would take a new ready job of it now (read uncommitted: a change in flight counts), into `v_free`. */
const takenNow = (t: QueueTables, d: RoutineDialect): string => `SELECT ${takesNewJobNowSql(t, d.rangeEndStops, 'p_queue')}
          INTO v_free;`;

/** The ring's start: count it on the guard row (`v_found` 0, or -1 without one) and, for a job that starts ready, find a registration with a token to hand it to (`v_free`). */
const ringStart = (t: QueueTables, d: RoutineDialect): string => `  IF p_ring > 0 THEN
    ${countRingSql(t, 'p_queue')};
    SET v_found = IF(ROW_COUNT() > 0, 0, -1);
    IF v_found = 0 AND p_phase = ${PHASE.ready} THEN
      SELECT \`conn\`, \`token\`, \`lease_us\` INTO v_hand, v_token, v_lease FROM ${t.sleepers} WHERE \`queue\` = p_queue AND \`conn\` > 0 AND \`token\` > 0 LIMIT 1;
      IF v_done = 0 THEN
        ${takenNow(t, d)}
      END IF;
      SET v_done = 0;
    END IF;
  END IF;
`;

/** The job's INSERT, leased to the registration's token (`v_free`: lease expiry on the database clock, attempt 1, running) or as `enqueue_job` inserts it. */
const insertMaybeLeased = (t: QueueTables): string => `  IF v_free = 1 THEN
  ${insertJob(t, leasedValues(PARAM_JOB, 'v_token', 'v_lease', 'UTC_TIMESTAMP(6)')).replaceAll('\n', '\n  ')}
  ELSE
  ${insertJob(t).replaceAll('\n', '\n  ')}
  END IF;
`;

/** The ring's `KILL`s, the registration the job went to first; a failure (a `KILL` the server refuses) answers its error number (`found` NULL) and the enqueue still commits. */
const killSleepers = `    IF v_found = 0 THEN
      BEGIN
        DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN GET DIAGNOSTICS CONDITION 1 v_errno = MYSQL_ERRNO; SET v_found = NULL; END;
    ${KILL_SLEEPERS.replaceAll('\n', '\n    ').trimEnd()}
      END;
    END IF;
`;

/** MySQL's and MariaDB's refusal to log a write at READ UNCOMMITTED with `binlog_format` STATEMENT, answered for a ring not sent. */
const ER_BINLOG_STMT_MODE_AND_ROW_ENGINE = 1665;

/** `enqueue_job_and_hand`: see `ENQUEUE_JOB_AND_HAND_ROUTINE`. */
const enqueueAndHand = (
  t: QueueTables,
  d: RoutineDialect,
): string => `CREATE PROCEDURE ${t.enqueueHandCall}(${inParams(ENQUEUE_JOB_PARAMS)}, IN p_ring INT UNSIGNED)
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'taskrow: one enqueue and one ring of the doorbell of its queue that hands the job to a sleeper'
BEGIN
  DECLARE v_id BIGINT UNSIGNED;
  DECLARE v_seen TINYINT DEFAULT 0;
  DECLARE v_conn BIGINT UNSIGNED;
  DECLARE v_found INT DEFAULT NULL;
  DECLARE v_errno INT DEFAULT NULL;
  DECLARE v_done TINYINT DEFAULT 0;
  DECLARE v_hand BIGINT UNSIGNED DEFAULT 0;
  DECLARE v_token BIGINT UNSIGNED DEFAULT 0;
  DECLARE v_lease BIGINT UNSIGNED DEFAULT 0;
  DECLARE v_free TINYINT DEFAULT 0;
  DECLARE c_sleepers CURSOR FOR ${sleepersSql(t, 'p_queue', 'p_ring', '`conn` = v_hand')};
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  IF p_ring > 0 AND @@SESSION.binlog_format = 'STATEMENT' THEN
    SET p_ring = 0, v_errno = ${ER_BINLOG_STMT_MODE_AND_ROW_ENGINE};
  END IF;
  IF p_ring > 0 THEN SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED; END IF;
  START TRANSACTION;
${ringStart(t, d)}${insertMaybeLeased(t)}${commitWithReceiptInto(t.receipts, killSleepers)}
  SELECT v_id AS \`id\`, IF(v_seen = 1 AND v_found IS NOT NULL, 0, v_found) AS \`found\`, v_errno AS \`ring_errno\`, v_free = 1 AND v_seen = 0 AS \`handed\`;
END`;

/**
 * One job's enqueue, its ring of the doorbell and the job handed to a sleeper,
 * as one statement and one transaction: `CALL <prefix>enqueue_job_and_hand(<enqueue_job's
 * arguments>, ring)`. With `ring` > 0, at READ UNCOMMITTED: the ring is counted on the queue's
 * guard row (which it holds until the commit); for a job that starts ready, when a registration
 * carries a token and a claim of the queue would take the job now (not paused, not rate-limited,
 * no due jobs to make ready, no job ready), the job is inserted leased to that token (lease expiry
 * on the database clock, attempt 1) instead of ready; its receipt; then up to `ring` sleepers are
 * interrupted, that registration's first, and the transaction commits. A sleeper holds the guard
 * row before its registration ends, so it finds the job after the commit. The answer is one row:
 * `id`, `found` (sleepers interrupted, -1 without a guard row, NULL when a `KILL` failed, with its
 * `ring_errno`: the enqueue commits all the same, and the leased job is read at the end of its
 * sleeper's sleep), `handed`. Idempotent per receipt token as `enqueue_job` is: a call with the
 * token of one that committed rolls back (its ring and hand with it) and answers that run's id.
 * Where `binlog_format` is STATEMENT (a server that cannot log writes made at READ UNCOMMITTED) it
 * enqueues as `enqueue_job` does and answers `found` NULL, `ring_errno` 1665, as a ring that
 * failed there. `SQL SECURITY INVOKER`.
 */
export const ENQUEUE_JOB_AND_HAND_ROUTINE: Routine = {
  name: (t) => t.enqueueHandCall,
  create: (t, d) => enqueueAndHand(t, d),
};
