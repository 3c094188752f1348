import { randomInt } from 'node:crypto';
import type { Executor } from '../../engine/executor.js';
import { TaskrowError } from '../../errors.js';
import { receiptToken } from '../../receipts/receipts.js';
import type { SqlValue } from '../../port.js';
import { toNumber } from '../../validate.js';
import { MAX_CONCURRENCY_KEY_CHARS } from '../model/options.js';
import { startState, type JobRow } from '../model/options.js';
import { mayCall } from '../routines/call.js';
import { enqueueCallRows, type RingInCall } from '../wake/ring-in-call.js';
import type { QueueTables } from '../model/tables.js';
import type { Routine } from '../routines/routine.js';
import { dueAt, insertInto, jobValues, type JobValues } from './insert.js';
import type { Enqueued } from '../model/types.js';

/** `enqueue_job`'s parameters, name and type, in order. */
export const ENQUEUE_JOB_PARAMS = [
  'p_queue VARCHAR(64) CHARACTER SET ascii',
  'p_grp VARCHAR(64) CHARACTER SET ascii',
  'p_phase TINYINT UNSIGNED',
  'p_priority SMALLINT',
  'p_ready_priority SMALLINT',
  'p_at VARCHAR(32) CHARACTER SET ascii',
  'p_delay BIGINT UNSIGNED',
  'p_max_attempts INT UNSIGNED',
  'p_token BIGINT UNSIGNED',
  'p_payload LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
  `p_conc_key VARCHAR(${MAX_CONCURRENCY_KEY_CHARS}) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`,
  'p_receipt BINARY(16)',
] as const;

/** A procedure's parameter list: `IN name type, ...`. */
export const inParams = (params: readonly string[]): string => params.map((p) => `IN ${p}`).join(', ');

/**
 * `CALL <prefix>enqueue_job(...)`: one job's enqueue as one statement. The procedure runs the
 * transaction the client would otherwise run statement by statement (BEGIN, INSERT job, INSERT
 * receipt, COMMIT) and returns the new id, so a single `enqueue()` is one round trip. It is
 * idempotent per receipt token: a second call with the token of one that committed meets that
 * receipt's key (error 1062, after waiting for a commit still in flight), rolls its own insert back
 * and returns the committed run's id. A retry after a lost reply is therefore the same CALL again.
 * Any other error rolls the transaction back before it reaches the client, so the connection never
 * goes back to the pool inside it. `SQL SECURITY INVOKER`: it runs with the caller's privileges and
 * survives its creator's account. A server without it (no `CREATE ROUTINE`, Vitess) enqueues in
 * the client's transaction.
 */
export const ENQUEUE_JOB_ROUTINE: Routine = {
  name: (t) => t.enqueueCall,
  create: (t) => `CREATE PROCEDURE ${t.enqueueCall}(${inParams(ENQUEUE_JOB_PARAMS)})
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'taskrow: one enqueue with its receipt, idempotent per receipt token'
BEGIN
  DECLARE v_id BIGINT UNSIGNED;
  DECLARE v_seen TINYINT DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
${insertJob(t)}
${commitWithReceipt(t.receipts, 'CAST(v_id AS CHAR)', 'v_id', 'id')}
END`,
};

/** A job's values from `enqueue_job`'s parameters; no `dedup` (a keyed enqueue stays in the client's transaction). */
export const PARAM_JOB: JobValues = {
  queue: 'p_queue',
  grp: 'p_grp',
  phase: 'p_phase',
  priority: 'p_priority',
  ready_priority: 'p_ready_priority',
  due_at: dueAt('p_at', 'p_delay'),
  run_at: '`due_at`',
  max_attempts: 'p_max_attempts',
  token: 'p_token',
  payload: 'p_payload',
  conc_key: 'p_conc_key',
  created_at: 'UTC_TIMESTAMP(6)',
};

/** An enqueue procedure's INSERT of one job, of `enqueue_job`'s parameters unless `v` is given; its id then in `v_id`. */
export const insertJob = (t: QueueTables, v: JobValues = PARAM_JOB): string => `  ${insertInto(t.jobs, v)}
    VALUES (${jobValues(v)});
  SET v_id = LAST_INSERT_ID();`;

/**
 * The end of an enqueue procedure (`enqueue_job`, `enqueue_jobs`), as SQL lines: write the receipt of token
 * `p_receipt` with `result`; when a run with that token committed one first (error 1062, met after
 * waiting for a commit in flight), roll this run back and answer that run's result, else commit
 * and answer `answer`; the answer's column is `column`. Needs `v_seen TINYINT` at 0.
 */
export function commitWithReceipt(receipts: string, result: string, answer: string, column: string): string {
  return `${writeReceipt(receipts, result)}
  IF v_seen = 1 THEN
    ROLLBACK;
    SELECT \`result\` AS \`${column}\` FROM ${receipts} WHERE \`token\` = p_receipt;
  ELSE
    COMMIT;
    SELECT ${answer} AS \`${column}\`;
  END IF;`;
}

/** The receipt's INSERT of `commitWithReceipt`: `v_seen` set to 1 when a run with the token committed one first. */
export const writeReceipt = (receipts: string, result: string): string => `  BEGIN
    DECLARE EXIT HANDLER FOR 1062 SET v_seen = 1;
    INSERT INTO ${receipts} (\`token\`, \`made_at\`, \`result\`) VALUES (p_receipt, UTC_TIMESTAMP(6), ${result});
  END;`;

/**
 * `commitWithReceipt` of one job's enqueue that answers nothing: it leaves the committed run's job
 * id in `v_id` (this run's, or, when a run with the token committed first, that run's from its
 * receipt), and runs `beforeCommit` (SQL lines) in this run's transaction before its COMMIT.
 */
export function commitWithReceiptInto(receipts: string, beforeCommit: string): string {
  return `${writeReceipt(receipts, 'CAST(v_id AS CHAR)')}
  IF v_seen = 1 THEN
    ROLLBACK;
    SELECT CAST(\`result\` AS UNSIGNED) INTO v_id FROM ${receipts} WHERE \`token\` = p_receipt;
  ELSE
${beforeCommit}    COMMIT;
  END IF;`;
}

/**
 * Whether `enqueueByCall` may serve `rows` through `exec`: one job without a dedup key (a keyed
 * job's upsert and its race with a concurrent enqueue of the same key stay in the client's
 * transaction), outside an application transaction (a CALL commits), through a client that ends
 * an interrupted statement's transaction (`SqlClient.endsInterrupted`), where the procedure was not
 * found missing.
 */
export function callable(exec: Executor, t: QueueTables, rows: readonly JobRow[]): boolean {
  return rows.length === 1 && rows[0]!.dedup === null && mayCall(exec, t.enqueueCall);
}

/**
 * Enqueues one job (see `callable`) in one statement, with its receipt; retried as a whole (the
 * procedure is idempotent per receipt token, so a retry after a lost reply returns the lost run's
 * id when it committed and inserts when it did not: never twice, never lost). Resolves to
 * undefined, having written nothing, when the procedure cannot be called (missing: a server that
 * refused to create it; a user without `EXECUTE`): the caller enqueues the usual way, and this
 * instance does so for a while (see `routines/call.ts`).
 * With `ring`, the same CALL rings the queue's doorbell after the commit, and may hand the job to a
 * sleeper, where the server has the procedure for it (see `handoff/hand-call.ts`).
 */
export async function enqueueByCall(exec: Executor, t: QueueTables, queue: string, row: JobRow, ring?: RingInCall): Promise<Enqueued[] | undefined> {
  const params: SqlValue[] = [queue, row.group, ...startState(row), row.runAt, row.delayMicros, row.maxAttempts];
  params.push(randomInt(1, 2 ** 47), row.payload, row.concKey, receiptToken());
  const rows = await enqueueCallRows<{ id?: unknown }>(exec, t, params, ring);
  if (rows === undefined) return undefined;
  const got = rows[0];
  if (got?.id === undefined || got.id === null)
    throw new TaskrowError('DATABASE_ERROR', `enqueue got no id back from ${t.enqueueCall} (queue ${JSON.stringify(queue)})`);
  return [{ id: toNumber(Buffer.isBuffer(got.id) ? got.id.toString('latin1') : got.id), deduplicated: false }];
}
