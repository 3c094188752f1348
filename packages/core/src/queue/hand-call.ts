import { columnExists, type Migration } from '../schema/migration.js';
import { dueInProcedure, leaseSet } from './claim-call.js';
import { ENQUEUE_JOB_PARAMS } from './enqueue-call.js';
import { wrapper } from './enqueue-ring-call.js';
import { ringProcedure } from './ring-call.js';
import { PHASE, queueTables, type QueueTables } from './tables.js';

/**
 * The hand-off: a ring that finds a sleeper able to run a job leases the job it rings for to that
 * sleeper, so the woken process reads its job instead of claiming it (see `doorbell.ts`). A sleeper
 * whose process has a worker with a free handler slot and no group filter registers a fencing
 * token (new for each sleep) and that worker's lease length; the ring, in its transaction that
 * holds the queue's guard row, leases the job to the first such registration when a claim of the
 * queue would take that job now (nothing else ready, no due jobs to make ready first, the queue
 * neither paused nor rate-limited, the job ready) and interrupts that sleeper first. The sleeper
 * takes the guard row before its registration ends, so it always finds what a ring handed it.
 */

/**
 * Schema version 23: on each registration, the fencing token a ring may lease a job to (0: none)
 * and the lease length (µs) of the worker that would run it.
 */
export const DOORBELL_HAND_MIGRATION: Migration = {
  version: 23,
  name: 'queue-doorbell-hand',
  statements: (prefix) => [
    `ALTER TABLE ${queueTables(prefix).sleepers}
  ADD COLUMN \`token\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'registration: the fencing token a ring may lease one job to (0: none)',
  ADD COLUMN \`lease_us\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'registration: the lease (microseconds) of a job leased to it'`,
  ],
  appliedIf: (prefix) => columnExists(prefix, 'queue_sleepers', 'token'),
};

/** Whether a claim of `p_queue` would take job `p_id` now: not paused, not rate-limited, no due jobs, no other job ready (read uncommitted: a change in flight counts). */
const takenNow = (t: QueueTables): string => `SELECT NOT EXISTS (SELECT 1 FROM ${t.queues} WHERE \`queue\` = p_queue AND \`paused_at\` IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM ${t.rateSlots} WHERE \`queue\` = p_queue)
          AND NOT EXISTS (SELECT 1 FROM ${t.jobs} FORCE INDEX (\`claim\`) WHERE \`queue\` = p_queue AND \`phase\` = ${PHASE.ready} AND \`id\` <> p_id)
          AND NOT ${dueInProcedure(t)}
        INTO v_free;`;

/** The ring of `ring_sleepers` (version 18) that first leases job `p_id` (when given) to a registration with a token, and interrupts that one first. */
const ringAndHand = (t: QueueTables): string =>
  ringProcedure(t, {
    name: t.ringHandCall,
    params: ', IN p_id BIGINT UNSIGNED',
    comment: 'taskrow: one ring of the doorbell of a queue, handing a new job to a sleeper',
    vars: `  DECLARE v_hand BIGINT UNSIGNED DEFAULT 0;
  DECLARE v_token BIGINT UNSIGNED DEFAULT 0;
  DECLARE v_lease BIGINT UNSIGNED DEFAULT 0;
  DECLARE v_free TINYINT DEFAULT 0;
  DECLARE v_handed TINYINT DEFAULT 0;
`,
    order: ' ORDER BY `conn` = v_hand DESC',
    before: `    IF p_id IS NOT NULL THEN
      SELECT \`conn\`, \`token\`, \`lease_us\` INTO v_hand, v_token, v_lease FROM ${t.sleepers} WHERE \`queue\` = p_queue AND \`conn\` > 0 AND \`token\` > 0 LIMIT 1;
      IF v_done = 0 THEN
        ${takenNow(t)}
      END IF;
      IF v_free = 1 THEN
        UPDATE ${t.jobs} FORCE INDEX (PRIMARY) SET ${leaseSet('v_lease', 'v_token')} WHERE \`id\` = p_id AND \`queue\` = p_queue AND \`phase\` = ${PHASE.ready};
        SET v_handed = ROW_COUNT() > 0;
      END IF;
      SET v_done = 0;
    END IF;
`,
    answer: ', v_handed AS `handed`',
  });

/** After an enqueue: the new job's id (a job that started ready only, from its receipt, so a retried call finds the committed run's), then the ring that hands it. */
const handAfter = (t: QueueTables) => ({
  vars: '      DECLARE v_id BIGINT UNSIGNED DEFAULT NULL;\n',
  body: `IF p_phase = ${PHASE.ready} THEN
        SELECT CAST(\`result\` AS UNSIGNED) INTO v_id FROM ${t.receipts} WHERE \`token\` = p_receipt;
      END IF;
      CALL ${t.ringHandCall}(p_queue, p_ring, v_id);`,
});

/**
 * Schema version 24: the ring that hands a job, and an enqueue with it, each one statement.
 * `CALL <prefix>ring_and_hand(queue, max, id)` is `ring_sleepers` (version 18) that first, when
 * a claim of the queue would take job `id` now (see the module's comment), leases it to the first
 * registration with a token (lease expiry on the database clock, one more attempt, that token) and
 * interrupts that sleeper first; it answers `found` and `handed` (1 when it leased the job).
 * `CALL <prefix>enqueue_job_and_hand(<enqueue_job's arguments>, ring)` is `enqueue_job_and_ring`
 * (version 21) whose ring is that one, for the job it enqueued (read from its receipt: a retry
 * after a lost reply hands the committed run's job when no one took it yet). A job leased so
 * is the sleeper's as if its claim had taken it. `SQL SECURITY INVOKER`; optional, as version 17.
 */
export const HAND_CALL_MIGRATION: Migration = {
  version: 24,
  name: 'queue-hand-call',
  optional: true,
  statements: (prefix) => {
    const t = queueTables(prefix);
    return [
      ringAndHand(t),
      wrapper(t, t.enqueueHandCall, t.enqueueCall, ENQUEUE_JOB_PARAMS, 'taskrow: one enqueue, then one ring of the doorbell of its queue that hands the job to a sleeper', handAfter(t)),
    ];
  },
};
