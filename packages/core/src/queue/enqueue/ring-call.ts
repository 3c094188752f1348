import { ENQUEUE_JOB_PARAMS, inParams } from './call.js';
import { ENQUEUE_JOBS_PARAMS } from './many-call.js';
import type { QueueTables } from '../model/tables.js';
import type { Routine } from '../routines/routine.js';

/** The ring's part of the procedures: after the enqueue, with `p_ring` > 0, the ring's procedure; its failure answers instead of failing the call. */
const ringAfter = (t: QueueTables): string => `  IF p_ring > 0 THEN
    BEGIN
      DECLARE EXIT HANDLER FOR SQLEXCEPTION
      BEGIN
        GET DIAGNOSTICS CONDITION 1 v_errno = MYSQL_ERRNO;
        SELECT NULL AS \`found\`, v_errno AS \`ring_errno\`;
      END;
      CALL ${t.ringCall}(p_queue, p_ring);
    END;
  END IF;`;

/** `CREATE PROCEDURE` of `name`, which calls `inner` with `params` (name and type each) and then rings. */
function wrapper(t: QueueTables, name: string, inner: string, params: readonly string[], comment: string): string {
  const names = params.map((p) => p.split(' ')[0]!);
  return `CREATE PROCEDURE ${name}(${inParams(params)}, IN p_ring INT UNSIGNED)
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT '${comment}'
BEGIN
  DECLARE v_errno INT;
  CALL ${inner}(${names.join(', ')});
${ringAfter(t)}
END`;
}

/**
 * An enqueue and its ring of the doorbell (see `doorbell.ts`) as one statement:
 * `CALL <prefix>enqueue_job_and_ring(<enqueue_job's arguments>, ring)` and
 * `CALL <prefix>enqueue_jobs_and_ring(<enqueue_jobs' arguments>, ring)` call the enqueue's procedure
 * and then, with `ring` > 0, `ring_sleepers` for up to `ring` sleepers: a sleeper in another process
 * is interrupted as the enqueue commits, in the server, instead of a round trip after the enqueue's
 * reply. The enqueue's result set comes first, unchanged, and its errors reach the client as before
 * (nothing committed, nothing rung); the ring's answer (`found`) comes second. A ring that fails
 * after the enqueue committed answers `found` NULL and its error number (`ring_errno`) instead of
 * failing the call, so the call is never retried for the ring's sake; a retry after a lost reply
 * returns the committed run's ids and rings again (a ring only wakes). `SQL SECURITY INVOKER`.
 */
export const ENQUEUE_JOB_AND_RING_ROUTINE: Routine = {
  name: (t) => t.enqueueRingCall,
  create: (t) => wrapper(t, t.enqueueRingCall, t.enqueueCall, ENQUEUE_JOB_PARAMS, 'taskrow: one enqueue, then one ring of the doorbell of its queue'),
};

/** `enqueue_jobs_and_ring`: see `ENQUEUE_JOB_AND_RING_ROUTINE`. */
export const ENQUEUE_JOBS_AND_RING_ROUTINE: Routine = {
  name: (t) => t.enqueueManyRingCall,
  create: (t) =>
    wrapper(t, t.enqueueManyRingCall, t.enqueueManyCall, ENQUEUE_JOBS_PARAMS, 'taskrow: a batch of enqueues, then one ring of the doorbell of its queue'),
};
