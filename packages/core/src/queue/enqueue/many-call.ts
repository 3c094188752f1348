import { randomInt } from 'node:crypto';
import type { Executor } from '../../engine/executor.js';
import { TaskrowError } from '../../errors.js';
import { receiptToken } from '../../receipts/receipts.js';
import { commitWithReceipt, inParams } from './call.js';
import { decodeEnqueued } from './enqueued-text.js';
import type { Migration } from '../../schema/migration.js';
import { MAX_CONCURRENCY_KEY_CHARS } from '../model/options.js';
import { startState, type JobRow } from '../model/options.js';
import { mayCall } from '../routines/call.js';
import { enqueueCallRows, type RingInCall } from './ring.js';
import { queueTables, type QueueTables } from '../model/tables.js';
import type { Enqueued } from '../model/types.js';

/** Most jobs one batch CALL takes: their ids, as the receipt's text, stay within MySQL's default `group_concat_max_len` (1,024). */
export const MAX_CALL_BATCH = 32;
/** Most payload bytes one batch CALL takes: a larger batch spends its time moving rows, not in round trips. */
export const MAX_CALL_BATCH_BYTES = 64 * 1024;

/** The expression of a row's due time from the batch's JSON row `r` (as `enqueue_job` computes it from its arguments). */
export const DUE = 'IF(r.`a` IS NULL AND r.`y` = 0, UTC_TIMESTAMP(6), DATE_ADD(COALESCE(CAST(r.`a` AS DATETIME(6)), UTC_TIMESTAMP(6)), INTERVAL r.`y` MICROSECOND))';

/** `enqueue_jobs`' parameters, name and type, in order. */
export const ENQUEUE_JOBS_PARAMS = ['p_queue VARCHAR(64) CHARACTER SET ascii', 'p_rows LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin', 'p_n INT UNSIGNED', 'p_mark BIGINT UNSIGNED', 'p_receipt BINARY(16)'] as const;

/**
 * Schema version 19: a batch of jobs' enqueue as one statement, `CALL <prefix>enqueue_jobs(queue,
 * rows, n, mark, receipt)`. The procedure runs the transaction the client would otherwise run
 * statement by statement (BEGIN, INSERT of the rows, read of their ids, INSERT receipt, COMMIT):
 * the rows come as one JSON array (`JSON_TABLE`, MySQL 8.0.4+ and MariaDB 10.6+), inserted in
 * array order with `mark` as their fencing token, and their ids are read back by that mark from
 * the first insert id (ids of one statement grow but need not be consecutive). It returns the ids
 * in order as the receipt's text (`1,2,3`), and is idempotent per receipt token as `enqueue_job`
 * is: a call with the token of one that committed rolls its rows back and returns that run's ids.
 * A read-back that does not find `n` rows fails the call (SQLSTATE 45000) and rolls it back.
 * `SQL SECURITY INVOKER`; optional, as version 17 (`enqueue-call.ts`).
 */
export const ENQUEUE_MANY_CALL_MIGRATION: Migration = {
  version: 19,
  name: 'queue-enqueue-many-call',
  optional: true,
  statements: (prefix) => [enqueueJobsProcedure('IF NOT EXISTS ', queueTables(prefix), 19)],
};

/** `enqueue_jobs` dropped and created again as of `version` (a CALL that comes between the two finds no procedure and enqueues in the client's transaction). */
export const recreatedEnqueueJobs = (prefix: string, version: IdsVersion): string[] => {
  const t = queueTables(prefix);
  return [`DROP PROCEDURE IF EXISTS ${t.enqueueManyCall}`, enqueueJobsProcedure('', t, version)];
};

/**
 * Schema version 30: `enqueue_jobs` of version 19 again (dropped and created; the same arguments
 * and answer, so processes of older builds keep calling it), which takes a batch's ids from its
 * first insert id where the server makes them consecutive instead of reading them back. With
 * `innodb_autoinc_lock_mode` 0 or 1 (MariaDB's default) an `INSERT ... SELECT` holds the table's
 * AUTO-INC lock until it ends, so its rows' ids are the first and then one
 * `auto_increment_increment` apart, in insert order; with 2 (MySQL's default, and every Galera
 * node's) the read-back by mark stays, as does any batch whose row count is not `n`. A CALL that
 * comes between the drop and the create finds no procedure and enqueues in the client's
 * transaction (see `procedures.ts`).
 */
export const ENQUEUE_MANY_CALL_CONSECUTIVE_MIGRATION: Migration = {
  version: 30,
  name: 'queue-enqueue-many-call-consecutive',
  optional: true,
  statements: (prefix) => recreatedEnqueueJobs(prefix, 30),
};

/**
 * Schema version 34: `enqueue_jobs` again (dropped and created; the same arguments and answer),
 * whose rows carry the tokens mark, mark + 1, ... in batch order, so that where the ids are one
 * statement's consecutive run, one read by primary key shows it in every lock mode: the row at the
 * first insert id plus (n - 1) steps of `auto_increment_increment` is the batch's last row. The
 * batch's ids grow in insert order from the first insert id, each a step apart or more, so n of
 * them end there only when they are the run. Under `innodb_autoinc_lock_mode` 2 (MySQL's default)
 * the ids of an `INSERT ... SELECT` that met no other insert are such a run too; version 30 read
 * them back by the mark (0 or 1 still need no read: the statement holds the AUTO-INC lock). Where
 * they are not a run, they are read back by the batch's tokens.
 */
export const ENQUEUE_MANY_CALL_ORDINAL_MIGRATION: Migration = {
  version: 34,
  name: 'queue-enqueue-many-call-ordinal',
  optional: true,
  statements: (prefix) => recreatedEnqueueJobs(prefix, 34),
};

/**
 * The ids' read-back by the batch's mark from its first insert id (version 19; version 30 where the
 * ids may not be consecutive), or, with `ordinal` (version 34), by the tokens of the batch's rows,
 * the mark plus each row's place in the batch.
 */
const readBack = (t: QueueTables, indent: string, ordinal = false): string => `${indent}SELECT GROUP_CONCAT(x.\`id\` ORDER BY x.\`id\` SEPARATOR ','), COUNT(*) = p_n INTO v_ids, v_seen
${indent}  FROM (SELECT \`id\` FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` >= v_first AND \`token\` ${ordinal ? 'BETWEEN p_mark AND p_mark + p_n - 1' : '= p_mark'} AND \`queue\` = p_queue ORDER BY \`id\` LIMIT p_n) AS x;`;

/** The version of a batch procedure's id taking (see `consecutiveIds`). */
export type IdsVersion = 30 | 34 | 36;

/**
 * The ids counted from the first insert id where one statement's are consecutive, else read back:
 * when the server's lock mode makes them so (version 30, see
 * `ENQUEUE_MANY_CALL_CONSECUTIVE_MIGRATION`) or, from version 34, when the row at the last id of
 * the range is the batch's last row, told by its token (see `ENQUEUE_MANY_CALL_ORDINAL_MIGRATION`).
 * Version 34 reads that row in an `IF`, where InnoDB takes a shared lock on it: when it is another
 * transaction's uncommitted row, the CALL waits for that transaction, and two batches whose ids
 * interleave can deadlock. From version 36 the same read is a `SELECT ... INTO`, a consistent read
 * that locks nothing: another transaction's row there is not the batch's, so its ids are read back.
 */
export const consecutiveIds = (t: QueueTables, version: IdsVersion): string => {
  const last = `EXISTS (SELECT 1 FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` = v_first + (p_n - 1) * v_step AND \`token\` = p_mark + p_n - 1 AND \`queue\` = p_queue)`;
  const run = `v_n = p_n AND (@@innodb_autoinc_lock_mode < 2${version === 30 ? '' : `
      OR ${last}`})`;
  const test = version === 36 ? `  SELECT ${run} INTO v_seen;
  IF v_seen = 1 THEN
    SET v_ids = CAST(v_first AS CHAR);` : `  IF ${run} THEN
    SET v_ids = CAST(v_first AS CHAR), v_seen = 1;`;
  return `  SELECT LAST_INSERT_ID(), ROW_COUNT(), @@auto_increment_increment INTO v_first, v_n, v_step;
${test}
    WHILE v_i < p_n DO
      SET v_ids = CONCAT(v_ids, ',', v_first + v_i * v_step), v_i = v_i + 1;
    END WHILE;
  ELSE
${readBack(t, '    ', version >= 34)}
  END IF;`;
};

/**
 * A batch procedure's INSERT of the rows of `p_rows` (a JSON array, see `callRow`) in array order:
 * `queue` and `grp` from the call and the row, then `rest`, the values of `phase`, `priority`,
 * `ready_priority`, `due_at`, `run_at`, `max_attempts`, `token`, `payload`, `conc_key` and
 * `created_at` (the JSON row is `r`, its place in the array `r.i`, from 1), and with `attempt` that
 * of `attempt` too.
 */
export const insertRows = (t: QueueTables, rest: string, attempt?: string): string => `  INSERT INTO ${t.jobs} (\`queue\`, \`grp\`, \`phase\`, \`priority\`, \`ready_priority\`, \`due_at\`, \`run_at\`, \`max_attempts\`, \`token\`, \`payload\`, \`conc_key\`, \`created_at\`${attempt === undefined ? '' : ', `attempt`'})
    SELECT p_queue, r.\`g\`, ${rest}${attempt === undefined ? '' : `, ${attempt}`}
    FROM JSON_TABLE(p_rows, '$[*]' COLUMNS (
      \`i\` FOR ORDINALITY, \`g\` VARCHAR(64) PATH '$.g', \`s\` TINYINT UNSIGNED PATH '$.s', \`p\` SMALLINT PATH '$.p',
      \`q\` SMALLINT PATH '$.q', \`a\` VARCHAR(32) PATH '$.a', \`y\` BIGINT UNSIGNED PATH '$.y', \`m\` INT UNSIGNED PATH '$.m',
      \`d\` LONGTEXT PATH '$.d', \`k\` VARCHAR(${MAX_CONCURRENCY_KEY_CHARS}) PATH '$.k')) AS r
    ORDER BY r.\`i\`;`;

/** `CREATE PROCEDURE` of `enqueue_jobs` as of version 19, 30, 34 or 36. */
function enqueueJobsProcedure(ifNotExists: string, t: QueueTables, version: 19 | IdsVersion): string {
  const declared = version !== 19 ? '\n  DECLARE v_n BIGINT;\n  DECLARE v_step BIGINT UNSIGNED;\n  DECLARE v_i INT UNSIGNED DEFAULT 1;' : '';
  const ids = version !== 19 ? consecutiveIds(t, version) : `  SET v_first = LAST_INSERT_ID();\n${readBack(t, '  ')}`;
  return `CREATE PROCEDURE ${ifNotExists}${t.enqueueManyCall}(${inParams(ENQUEUE_JOBS_PARAMS)})
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'taskrow: a batch of enqueues with its receipt, idempotent per receipt token'
BEGIN
  DECLARE v_first BIGINT UNSIGNED;
  DECLARE v_ids TEXT CHARACTER SET ascii;
  DECLARE v_seen TINYINT DEFAULT 0;${declared}
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
${insertRows(t, `r.\`s\`, r.\`p\`, r.\`q\`, ${DUE}, ${DUE}, r.\`m\`, ${version >= 34 ? 'p_mark + r.`i` - 1' : 'p_mark'}, r.\`d\`, r.\`k\`, UTC_TIMESTAMP(6)`)}
${ids}
  IF v_seen = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'taskrow: enqueue_jobs did not find its rows by their mark';
  END IF;
  SET v_seen = 0;
${commitWithReceipt(t.receipts, 'v_ids', 'v_ids', 'ids')}
END`;
}

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
 * With `ring`, the same CALL rings the queue's doorbell after the commit where the server has the
 * procedure for it (see `enqueue-ring-call.ts`).
 */
export async function enqueueManyByCall(exec: Executor, t: QueueTables, queue: string, rows: readonly JobRow[], ring?: RingInCall): Promise<Enqueued[] | undefined> {
  const json = JSON.stringify(rows.map(callRow));
  const got = await enqueueCallRows<{ ids?: unknown }>(exec, t, true, [queue, json, rows.length, randomInt(1, 2 ** 47), receiptToken()], ring);
  if (got === undefined) return undefined;
  const ids = got[0]?.ids;
  const text = Buffer.isBuffer(ids) ? ids.toString('latin1') : typeof ids === 'string' ? ids : '';
  const out = decodeEnqueued(text);
  if (out.length !== rows.length || !out.every((e) => Number.isSafeInteger(e.id) && e.id > 0 && !e.deduplicated)) {
    throw new TaskrowError('DATABASE_ERROR', `enqueue of ${rows.length} jobs got ${JSON.stringify(text)} back from ${t.enqueueManyCall} (queue ${JSON.stringify(queue)})`);
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
