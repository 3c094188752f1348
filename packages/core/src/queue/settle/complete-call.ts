import { TaskrowError } from '../../errors.js';
import { toNumber } from '../../validate.js';
import type { FastOutcome } from './ack.js';
import { markSettled } from '../model/held.js';
import { callRows, mayCall } from '../routines/call.js';
import type { AckContext } from './context.js';
import type { QueueTables } from '../model/tables.js';
import { heldSql } from '../model/fence.js';
import type { Routine } from '../routines/routine.js';
import type { JobRef } from '../model/types.js';

/**
 * A plain completion in one statement: `CALL <prefix>complete_jobs(done, n, queue)`, where a transaction of its own would take three (BEGIN, the fenced DELETE, COMMIT;
 * two on a kept session).
 */

/**
 * The procedures' transaction at READ COMMITTED (a missing id takes no gap lock) and its DELETE of
 * the jobs of `p_done` (a JSON array of `[id, token]` pairs) still running in `p_queue` under
 * those tokens (`heldSql`, the fencing check of every ack), joined by primary key (`FORCE INDEX`:
 * MariaDB otherwise planned a scan of the table for the join).
 */
export const deleteDone = (t: QueueTables): string => `SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  START TRANSACTION;
  DELETE j FROM JSON_TABLE(p_done, '$[*]' COLUMNS (\`i\` BIGINT UNSIGNED PATH '$[0]', \`k\` BIGINT UNSIGNED PATH '$[1]')) AS d
    STRAIGHT_JOIN ${t.jobs} AS j FORCE INDEX (PRIMARY) ON j.\`id\` = d.\`i\`
    WHERE ${heldSql('p_queue', 'd.`k`', 'j.')};`;

/**
 * Deletes the jobs of `p_done` still held (`deleteDone`); commits when that matched all `p_n` of
 * them, else rolls back. Answers one row, `applied` 1 or 0. Any error rolls back before it
 * reaches the client.
 */
const completeProcedure = (t: QueueTables): string => `CREATE PROCEDURE ${t.completeCall}(
  IN p_done JSON, IN p_n INT UNSIGNED, IN p_queue VARCHAR(64) CHARACTER SET ascii)
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'taskrow: complete a batch'
BEGIN
  DECLARE v_n BIGINT UNSIGNED DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  ${deleteDone(t)}
  SET v_n = ROW_COUNT();
  IF v_n = p_n THEN COMMIT; ELSE ROLLBACK; END IF;
  SELECT IF(v_n = p_n, 1, 0) AS \`applied\`;
END`;

/** `<prefix>complete_jobs` (see `completeProcedure`): where it is missing, a completion is its own transaction. */
export const COMPLETE_JOBS_ROUTINE: Routine = {
  name: (t) => t.completeCall,
  create: (t) => completeProcedure(t),
};

/**
 * Whether a completion of `refs` may go by `procedure` (`complete_jobs`, or `complete_claim_jobs`
 * carrying it in a claim): a plain delete, nothing else to write (no finished jobs kept, no
 * results, no job that may hold a concurrency key's slot), through a client that may call it.
 */
export function carriable(c: AckContext, refs: readonly JobRef[], results: ReadonlyMap<number, string> | undefined, procedure: string): boolean {
  return (
    refs.length > 0 &&
    c.settings.keepFinishedFor === 0 &&
    (results === undefined || results.size === 0) &&
    refs.every((r) => (r as { concurrencyKey?: unknown }).concurrencyKey === null) &&
    mayCall(c.exec, procedure)
  );
}

/**
 * The procedures' first two arguments for `refs`: `p_done`, the JSON array of `[id, token]` pairs
 * in id order (one lock order for every acker), and `p_n`, how many.
 */
export function doneArgs(refs: readonly JobRef[]): [string, number] {
  const sorted = [...refs].sort((a, b) => a.id - b.id);
  return [JSON.stringify(sorted.map((r) => [r.id, r.token])), sorted.length];
}

/**
 * Completes `refs` by one CALL of `complete_jobs` where it may (see `carriable`), sent once:
 * resolves `applied` (every job was held and is deleted; the refs are marked settled), `check`
 * (nothing changed: a job was not held, or a deadlock or lock wait rolled the procedure back; the
 * checking path names the lost jobs), `recover` (the outcome is unknown: a lost reply, or an
 * error that may have come after the COMMIT; the checking path MUST prove each job, as a
 * `complete()` retried after a lost reply does), or undefined, having run nothing, when the
 * completion cannot go by CALL. MUST NOT complete a job twice.
 */
export async function completeByCall(
  c: AckContext,
  refs: readonly JobRef[],
  results: ReadonlyMap<number, string> | undefined,
): Promise<FastOutcome<undefined> | undefined> {
  if (!carriable(c, refs, results, c.t.completeCall)) return undefined;
  let rows: { applied: unknown }[] | undefined;
  try {
    rows = await callRows<{ applied: unknown }>(c.exec.once(), c.t.completeCall, [...doneArgs(refs), c.queue]);
  } catch (err) {
    if (!(err instanceof TaskrowError) || err.code === 'CLIENT_CLOSED' || err.code === 'SCHEMA_MISSING') throw err;
    return { next: err.code === 'RETRIES_EXHAUSTED' ? 'check' : 'recover' };
  }
  if (rows === undefined) return undefined;
  if (toNumber(rows[0]?.applied) !== 1) return { next: 'check' };
  markSettled(refs);
  return { next: 'applied', value: undefined };
}
