import { randomInt } from 'node:crypto';
import type { Executor } from '../../engine/executor.js';
import { TaskrowError } from '../../errors.js';
import { receiptToken } from '../../receipts/receipts.js';
import { commitWithReceipt, inParams } from './call.js';
import { decodeEnqueued } from './enqueued-text.js';
import { MAX_CONCURRENCY_KEY_CHARS } from '../model/options.js';
import { startState, type JobRow } from '../model/options.js';
import { callRows, mayCall } from '../routines/call.js';
import type { QueueTables } from '../model/tables.js';
import type { Routine } from '../routines/routine.js';
import { dueAt, insertInto, jobValues, type JobValues } from './insert.js';
import type { Enqueued } from '../model/types.js';

/** Most jobs one batch CALL takes: their ids, as the receipt's text, stay within MySQL's default `group_concat_max_len` (1,024). */
export const MAX_CALL_BATCH = 32;
/** Most payload bytes one batch CALL takes: a larger batch spends its time moving rows, not in round trips. */
export const MAX_CALL_BATCH_BYTES = 64 * 1024;

/**
 * A job's values from the batch's JSON row `r` (see `callRow`; `r.i` its place in the array, from
 * 1), under the fencing token mark + its place in the batch. `run_at` repeats the due time: in an
 * `INSERT ... SELECT` a column name would read `r`, not the new row. No `dedup`: a keyed batch
 * stays in the client's transaction.
 */
export const BATCH_ROW: JobValues = {
  queue: 'p_queue',
  grp: 'r.`g`',
  phase: 'r.`s`',
  priority: 'r.`p`',
  ready_priority: 'r.`q`',
  due_at: dueAt('r.`a`', 'r.`y`'),
  run_at: dueAt('r.`a`', 'r.`y`'),
  max_attempts: 'r.`m`',
  token: 'p_mark + r.`i` - 1',
  payload: 'r.`d`',
  conc_key: 'r.`k`',
  created_at: 'UTC_TIMESTAMP(6)',
};

/** `enqueue_jobs`' parameters, name and type, in order. */
export const ENQUEUE_JOBS_PARAMS = [
  'p_queue VARCHAR(64) CHARACTER SET ascii',
  'p_rows LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
  'p_n INT UNSIGNED',
  'p_mark BIGINT UNSIGNED',
  'p_receipt BINARY(16)',
] as const;

/** The ids' read-back by the tokens of the batch's rows: the mark plus each row's place in the batch. */
const readBack = (
  t: QueueTables,
  indent: string,
): string => `${indent}SELECT GROUP_CONCAT(x.\`id\` ORDER BY x.\`id\` SEPARATOR ','), COUNT(*) = p_n INTO v_ids, v_seen
${indent}  FROM (SELECT \`id\` FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` >= v_first AND \`token\` BETWEEN p_mark AND p_mark + p_n - 1 AND \`queue\` = p_queue ORDER BY \`id\` LIMIT p_n) AS x;`;

/** The variables of a batch procedure that `consecutiveIds` uses (`v_ids` its answer, `v_seen` 0 after it). */
export const BATCH_DECLARATIONS = `  DECLARE v_first BIGINT UNSIGNED;
  DECLARE v_ids TEXT CHARACTER SET ascii;
  DECLARE v_seen TINYINT DEFAULT 0;
  DECLARE v_n BIGINT;
  DECLARE v_step BIGINT UNSIGNED;
  DECLARE v_i INT UNSIGNED DEFAULT 1;
`;

/**
 * A batch's ids, into `v_ids`: counted from the first insert id where they are one consecutive
 * run, else read back by the rows' tokens; when not all `p_n` are found, the call of `procedure`
 * fails (SQLSTATE 45000). With
 * `innodb_autoinc_lock_mode` 0 or 1 (MariaDB's default) an `INSERT ... SELECT` holds the table's
 * AUTO-INC lock until it ends, so its ids are a run. Under mode 2 (MySQL's default, and every
 * Galera node's) they are a run when no other insert came between: then the row at the first id
 * plus (n - 1) steps of `auto_increment_increment` is the batch's last row, told by its token. That
 * row is read by a `SELECT ... INTO`, a consistent read that locks nothing (a read in an `IF` takes
 * a shared lock: two batches whose ids interleave then deadlock); another transaction's row there
 * is not the batch's, and its ids are read back. Needs `BATCH_DECLARATIONS`; leaves `v_seen` 0.
 */
export const consecutiveIds = (t: QueueTables, procedure: string): string => {
  const last = `EXISTS (SELECT 1 FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` = v_first + (p_n - 1) * v_step AND \`token\` = p_mark + p_n - 1 AND \`queue\` = p_queue)`;
  return `  SELECT LAST_INSERT_ID(), ROW_COUNT(), @@auto_increment_increment INTO v_first, v_n, v_step;
  SELECT v_n = p_n AND (@@innodb_autoinc_lock_mode < 2
      OR ${last}) INTO v_seen;
  IF v_seen = 1 THEN
    SET v_ids = CAST(v_first AS CHAR);
    WHILE v_i < p_n DO
      SET v_ids = CONCAT(v_ids, ',', v_first + v_i * v_step), v_i = v_i + 1;
    END WHILE;
  ELSE
${readBack(t, '    ')}
  END IF;
  IF v_seen = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'taskrow: ${procedure} did not find its rows by their mark';
  END IF;
  SET v_seen = 0;`;
};

/**
 * A batch procedure's INSERT of the rows of `p_rows` (a JSON array, see `callRow`) in array order,
 * each with the values `v` (`BATCH_ROW`, or made from it) gives.
 */
export const insertRows = (t: QueueTables, v: JobValues): string => `  ${insertInto(t.jobs, v)}
    SELECT ${jobValues(v)}
    FROM JSON_TABLE(p_rows, '$[*]' COLUMNS (
      \`i\` FOR ORDINALITY, \`g\` VARCHAR(64) PATH '$.g', \`s\` TINYINT UNSIGNED PATH '$.s', \`p\` SMALLINT PATH '$.p',
      \`q\` SMALLINT PATH '$.q', \`a\` VARCHAR(32) PATH '$.a', \`y\` BIGINT UNSIGNED PATH '$.y', \`m\` INT UNSIGNED PATH '$.m',
      \`d\` LONGTEXT PATH '$.d', \`k\` VARCHAR(${MAX_CONCURRENCY_KEY_CHARS}) PATH '$.k')) AS r
    ORDER BY r.\`i\`;`;

/**
 * `CALL <prefix>enqueue_jobs(queue, rows, n, mark, receipt)`: a batch of jobs' enqueue as one
 * statement. The procedure runs the transaction the client would otherwise run statement by
 * statement (BEGIN, INSERT of the rows, their ids, INSERT receipt, COMMIT): the rows come as one
 * JSON array (`JSON_TABLE`), inserted in array order under the fencing tokens mark, mark + 1, ...,
 * and their ids are taken as `consecutiveIds` says. It returns the ids in order as the receipt's
 * text (`1,2,3`), and is idempotent per receipt token as `enqueue_job` is: a call with the token of
 * one that committed rolls its rows back and returns that run's ids. Ids it cannot find fail the
 * call (SQLSTATE 45000) and roll it back. `SQL SECURITY INVOKER`.
 */
export const ENQUEUE_JOBS_ROUTINE: Routine = {
  name: (t) => t.enqueueManyCall,
  create: (t) => `CREATE PROCEDURE ${t.enqueueManyCall}(${inParams(ENQUEUE_JOBS_PARAMS)})
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'taskrow: a batch of enqueues with its receipt, idempotent per receipt token'
BEGIN
${BATCH_DECLARATIONS}  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
${insertRows(t, BATCH_ROW)}
${consecutiveIds(t, 'enqueue_jobs')}
${commitWithReceipt(t.receipts, 'v_ids', 'v_ids', 'ids')}
END`,
};

/**
 * Whether `enqueueManyByCall` may serve `rows` through `exec`: 2 to `MAX_CALL_BATCH` jobs without
 * dedup keys (a keyed batch's upsert stays in the client's transaction), of at most
 * `MAX_CALL_BATCH_BYTES` of payload, where the procedure may be called (`mayCall`).
 */
export function batchCallable(exec: Executor, t: QueueTables, rows: readonly JobRow[]): boolean {
  if (rows.length < 2 || rows.length > MAX_CALL_BATCH || rows.some((r) => r.dedup !== null)) return false;
  return rows.reduce((n, r) => n + r.payloadBytes, 0) <= MAX_CALL_BATCH_BYTES && mayCall(exec, t.enqueueManyCall);
}

/**
 * Enqueues a batch (see `batchCallable`) in one statement, with its receipt; retried as a whole
 * (idempotent per receipt token: a retry after a lost reply returns the lost run's ids when it
 * committed and inserts when it did not). Resolves to one entry per row, in order, or to undefined,
 * having written nothing, when the procedure cannot be called: the caller enqueues the usual way.
 */
export async function enqueueManyByCall(exec: Executor, t: QueueTables, queue: string, rows: readonly JobRow[]): Promise<Enqueued[] | undefined> {
  const json = JSON.stringify(rows.map(callRow));
  const got = await callRows<{ ids?: unknown }>(exec, t.enqueueManyCall, [queue, json, rows.length, randomInt(1, 2 ** 47), receiptToken()]);
  return got === undefined ? undefined : batchIds(got[0]?.ids, rows.length, t.enqueueManyCall, queue);
}

/**
 * The entries of a batch of `n` new jobs from the `ids` a batch procedure (`procedure`) answers
 * (the receipt's text, see `enqueued-text.ts`), in row order. MUST throw `DATABASE_ERROR`, naming
 * what came back, unless that is `n` new ids.
 */
export function batchIds(ids: unknown, n: number, procedure: string, queue: string): Enqueued[] {
  const text = Buffer.isBuffer(ids) ? ids.toString('latin1') : typeof ids === 'string' ? ids : '';
  const out = decodeEnqueued(text);
  if (out.length !== n || !out.every((e) => Number.isSafeInteger(e.id) && e.id > 0 && !e.deduplicated)) {
    throw new TaskrowError('DATABASE_ERROR', `enqueue of ${n} jobs got ${JSON.stringify(text)} back from ${procedure} (queue ${JSON.stringify(queue)})`);
  }
  return out;
}

/** A row as the procedure's JSON_TABLE reads it; a null is left out (the column is then NULL). */
export function callRow(r: JobRow): Record<string, string | number> {
  const [phase, priority, readyPriority] = startState(r);
  const row: Record<string, string | number> = { g: r.group, s: phase, p: priority, q: readyPriority, y: r.delayMicros, m: r.maxAttempts, d: r.payload };
  if (r.runAt !== null) row['a'] = r.runAt;
  if (r.concKey !== null) row['k'] = r.concKey;
  return row;
}
