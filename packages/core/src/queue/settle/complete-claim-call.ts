import { LOST, takeHeadTurn, type ClaimArgs, type ClaimCall, type ClaimRows, type ClaimState } from '../claim/claim.js';
import { UNHELD_STATE } from '../claim/call.js';
import { markSettled } from '../model/held.js';
import { completeUnproven } from './settle.js';
import type { AckContext } from './context.js';
import { deleteDone, doneArgs } from './complete-call.js';
import type { QueueTables } from '../model/tables.js';
import type { Routine } from '../routines/routine.js';
import type { JobRef } from '../model/types.js';

/**
 * A worker's completion of a batch and its next claim in one
 * statement, `CALL <prefix>complete_claim_jobs(done, n, <the claim procedure's arguments>)`. At
 * READ COMMITTED it deletes the jobs of `done` (a JSON array of `[id, token]` pairs) still running
 * under those tokens; when that matched fewer than `n` rows it rolls the deletion back and answers
 * one row of state 5 (`UNHELD_STATE`) without claiming. Otherwise it commits and calls the claim
 * procedure, whose answer is its own. Any error rolls back what is uncommitted before it reaches
 * the client (the DELETE: see `deleteDone`).
 */
const completeClaimProcedure = (t: QueueTables): string => `CREATE PROCEDURE ${t.completeClaimCall}(
  IN p_done JSON, IN p_n INT UNSIGNED,
  IN p_queue VARCHAR(64) CHARACTER SET ascii, IN p_limit INT UNSIGNED, IN p_lease BIGINT UNSIGNED, IN p_token BIGINT UNSIGNED,
  IN p_from_priority SMALLINT, IN p_from_due BIGINT, IN p_stale TINYINT, IN p_serial TINYINT)
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'taskrow: complete a batch, then claim'
BEGIN
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  ${deleteDone(t)}
  IF ROW_COUNT() <> p_n THEN
    ROLLBACK;
    SELECT ${UNHELD_STATE} AS \`state\`, 0 AS \`head\`, 0 AS \`due\`, NULL AS \`last\`, 2 AS \`locked\`, NULL AS \`id\`;
  ELSE
    COMMIT;
    CALL ${t.claimCall}(p_queue, p_limit, p_lease, p_token, p_from_priority, p_from_due, p_stale, p_serial);
  END IF;
END`;

/** `<prefix>complete_claim_jobs` (see `completeClaimProcedure`): where it is missing, a worker completes and claims apart. */
export const COMPLETE_CLAIM_JOBS_ROUTINE: Routine = {
  name: (t) => t.completeClaimCall,
  create: (t) => completeClaimProcedure(t),
};

/** What `completeAndClaimByCall` did: the claimed rows, or that the claim is the caller's; `unheld` when the completion did not apply. */
export type CarriedClaim = { readonly completed: true; readonly rows: ClaimRows | undefined } | { readonly completed: false };

/**
 * Completes `refs` and claims with `call` in one statement (see `COMPLETE_CLAIM_JOBS_ROUTINE`),
 * sent once. MUST NOT complete a job twice nor leave a claimed job leased to nobody: after a lost
 * reply (or a deadlock inside it) the jobs leased under the claim's token are looked for first
 * (found, both parts committed); otherwise the completion is proven job by job (`completeUnproven`,
 * as a `complete()` retried after a lost reply) and the claim is left to the caller. Resolves
 * `completed: false`, having changed nothing, when a job was no longer held or the procedure
 * cannot be called: the caller then completes and claims the usual way (which names the lost
 * jobs). `rows` undefined: the completion applied and the caller claims on its own.
 */
export async function completeAndClaimByCall<P>(
  c: AckContext,
  refs: readonly JobRef[],
  call: ClaimCall<P>,
  args: ClaimArgs,
  state: ClaimState,
): Promise<CarriedClaim> {
  await takeHeadTurn(c.exec, c.t, c.queue, state.cursor, args.group);
  const got = await call.byCarryingCall(c.exec, { procedure: c.t.completeClaimCall, leading: doneArgs(refs) });
  if (got === undefined || got === 'unheld') return { completed: false };
  const rows =
    got === 'committed' ? undefined : got !== LOST ? got : await c.exec.attempts(() => async (conn) => call.lostBefore(conn), { isolation: 'READ COMMITTED' });
  if (got !== LOST || rows !== undefined) {
    markSettled(refs); // the completion committed: before the claim's run, or with the lost run whose jobs were found
    return { completed: true, rows };
  }
  await completeUnproven(c, refs);
  return { completed: true, rows: undefined };
}
