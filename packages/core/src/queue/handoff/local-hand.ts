import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Executor } from '../../engine/executor.js';
import { purgeReceiptsNow, receiptToken } from '../../receipts/receipts.js';
import type { RoutineDialect } from '../../dialect.js';
import { epochMicros } from '../../sql.js';
import { toNumber } from '../../validate.js';
import { jobOf } from '../claim/claim.js';
import type { ClaimRow, Handed } from '../model/claimed.js';
import { leaseEnd, takesNewJobNowSql } from '../model/gate.js';
import { heldSql } from '../model/fence.js';
import { inParams, writeReceipt } from '../enqueue/call.js';
import {
  BATCH_DECLARATIONS,
  BATCH_ROW,
  batchIds,
  callRow,
  consecutiveIds,
  ENQUEUE_JOBS_PARAMS,
  insertRows,
  MAX_CALL_BATCH,
  MAX_CALL_BATCH_BYTES,
} from '../enqueue/many-call.js';
import { leasedValues } from '../enqueue/insert.js';
import { leaseConfirmed } from '../model/held.js';
import type { JobRow } from '../model/options.js';
import { callResults, mayCall } from '../routines/call.js';
import type { QueueTables } from '../model/tables.js';
import type { Routine } from '../routines/routine.js';
import type { Enqueued, JobRef } from '../model/types.js';
import { producerOf } from '../enqueue/producer.js';
import { announce } from '../wake/ring.js';
import { runnerFor, type Runner } from '../wake/wake.js';

/**
 * The local hand-off: an enqueue whose process has an idle worker of the queue leases its jobs to
 * that worker in the enqueue's own statement, so the worker runs them without claiming them. A
 * claim would cost the server a transaction of its own per batch (claim lock, gate, locking read,
 * lease, read-back), and a trickle of small enqueues, each waking a worker, makes one claim of a
 * few jobs per enqueue. The jobs go through the table as ever (inserted, leased, deleted by the
 * completion, fenced by their tokens): only the claim's read is skipped, because the process that
 * wrote the rows already holds them.
 */

/** `p_free`: a claim of `p_queue` would take a new ready job now (see `takesNewJobNowSql`), and the statement's time, into `v_free`, `v_now`. */
const freeNow = (t: QueueTables, d: RoutineDialect): string => `SELECT ${takesNewJobNowSql(t, d.rangeEndStops, 'p_queue')},
      UTC_TIMESTAMP(6)
      INTO v_free, v_now;`;

/** The rows' values leased to the runner (see `leasedValues`): lease expiry `p_lease` µs from `v_now`, fencing tokens mark, mark + 1, ...; no concurrency key (the caller passes none). */
const LEASED = leasedValues({ ...BATCH_ROW, conc_key: 'NULL' }, BATCH_ROW.token, 'p_lease', 'v_now');

/** The answer of a run whose receipt token had committed first: that run's ids, and whether its first job is still leased under its token (then every job is: they were leased together). */
const replayed = (
  t: QueueTables,
): string => `    SELECT x.\`result\` AS \`ids\`, j.\`id\` IS NOT NULL AS \`handed\`, ${epochMicros('j.`run_at`')} AS run_us, ${epochMicros('j.`due_at`')} AS due_us
      FROM ${t.receipts} AS x LEFT JOIN ${t.jobs} AS j FORCE INDEX (PRIMARY)
        ON j.\`id\` = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(x.\`result\`, ',', 1), '-', 1) AS UNSIGNED) AND ${heldSql('p_queue', 'p_mark', 'j.')}
      WHERE x.\`token\` = p_receipt;`;

/** `CREATE PROCEDURE` of `enqueue_jobs_leased`: see `ENQUEUE_JOBS_LEASED_ROUTINE`. */
const leasedProcedure = (
  t: QueueTables,
  d: RoutineDialect,
): string => `CREATE PROCEDURE ${t.enqueueLeaseCall}(${inParams([...ENQUEUE_JOBS_PARAMS, 'p_lease BIGINT UNSIGNED'])})
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'taskrow: a batch of enqueues leased to a worker of the enqueuing process when a claim would take it now'
BEGIN
${BATCH_DECLARATIONS}  DECLARE v_free TINYINT DEFAULT 0;
  DECLARE v_now DATETIME(6);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  ${freeNow(t, d)}
  IF v_free = 1 THEN
  ${insertRows(t, LEASED).replaceAll('\n', '\n  ')}
  ELSE
  ${insertRows(t, BATCH_ROW).replaceAll('\n', '\n  ')}
  END IF;
${consecutiveIds(t, 'enqueue_jobs_leased')}
${writeReceipt(t.receipts, 'v_ids')}
  IF v_seen = 1 THEN
    ROLLBACK;
${replayed(t)}
  ELSE
    COMMIT;
    SELECT v_ids AS \`ids\`, v_free AS \`handed\`, ${epochMicros('v_now')} AS run_us, ${epochMicros(leaseEnd('p_lease', 'v_now'))} AS due_us;
  END IF;
END`;

/**
 * `CALL <prefix>enqueue_jobs_leased(queue, rows, n, mark, receipt, lease)`, the batch enqueue of
 * `enqueue_jobs` (the same rows, ids and receipt) that leases the
 * jobs instead of making them ready when a claim of the queue would take them now: the queue
 * neither paused nor rate-limited, no job ready, no due job waiting to be made ready (plain reads
 * in the enqueue's transaction). Leased jobs are inserted running, attempt 1, row k (from 0) under
 * the fencing token `mark + k`, their lease ending `lease` microseconds after the statement's time
 * (database clock). Its one answer row: `ids` (as `enqueue_jobs` answers them), `handed` (1 when
 * leased), `run_us` and `due_us` (the statement's time and the lease's end, µs since 1970 UTC).
 * Idempotent per receipt token as `enqueue_jobs` is: a call with the token of one that committed
 * rolls back and answers that run's ids, with `handed` 1 only while its first job is still leased
 * under its token. The caller MUST pass only rows that start ready (no delay or run time, no
 * concurrency key) and no dedup keys. `SQL SECURITY INVOKER`.
 */
export const ENQUEUE_JOBS_LEASED_ROUTINE: Routine = {
  name: (t) => t.enqueueLeaseCall,
  create: (t, d) => leasedProcedure(t, d),
};

/**
 * Whether `rows` may be leased by their enqueue through `exec` to a worker of this process: 1 to
 * `MAX_CALL_BATCH` jobs that start ready (no delay, run time or concurrency key) without dedup
 * keys, of at most `MAX_CALL_BATCH_BYTES` of payload, on a server that is not a node of a
 * multi-writer cluster (the worker's completion may reach another node than the enqueue), where
 * the procedure may be called (`mayCall`: never inside `tr.in(tx)`).
 */
export function handable(exec: Executor, t: QueueTables, rows: readonly JobRow[]): boolean {
  if (rows.length === 0 || rows.length > MAX_CALL_BATCH || exec.dialect.multiWriter) return false;
  let bytes = 0;
  for (const r of rows) {
    if (r.delayed || r.concKey !== null || r.dedup !== null) return false;
    bytes += r.payloadBytes;
  }
  return bytes <= MAX_CALL_BATCH_BYTES && mayCall(exec, t.enqueueLeaseCall);
}

/** The procedure's answer row. */
interface LeasedRow {
  ids?: unknown;
  handed?: unknown;
  run_us?: unknown;
  due_us?: unknown;
}

/**
 * Enqueues `rows` (see `handable`) in one statement, leased to `runner` when a claim of the queue
 * would take them now (see `ENQUEUE_JOBS_LEASED_ROUTINE`): the runner then takes them, each lease
 * counted on the local clock from before the statement was first sent (so it ends before the
 * database's); otherwise, or on any failure, the runner's slots are given back (`cancel`) and the
 * jobs are ready for claims as any enqueue's. Retried as a whole after a lost connection: the
 * retry meets the committed run's receipt and hands its jobs only while they are still leased
 * under their tokens. Resolves to one entry per row and whether the jobs were handed, or to
 * undefined, having written nothing, when the procedure cannot be called. A failure that leaves
 * the outcome unknown MAY leave committed jobs leased to tokens nobody holds: they are due again
 * when their leases end, as any lost lease.
 */
export async function enqueueLeased(
  exec: Executor,
  t: QueueTables,
  queue: string,
  rows: readonly JobRow[],
  runner: Runner,
  progress: (job: JobRef, value: unknown) => Promise<void>,
): Promise<{ out: Enqueued[]; handed: boolean } | undefined> {
  const mark = randomInt(1, 2 ** 47);
  const sentAt = performance.now();
  let answer: LeasedRow | undefined;
  let out: Enqueued[];
  try {
    const sets = await callResults(exec, t.enqueueLeaseCall, [queue, JSON.stringify(rows.map(callRow)), rows.length, mark, receiptToken(), runner.leaseMicros]);
    if (sets === undefined) {
      runner.cancel();
      return undefined;
    }
    answer = sets[0]?.[0] as LeasedRow | undefined;
    out = batchIds(answer?.ids, rows.length, t.enqueueLeaseCall, queue);
  } catch (err) {
    runner.cancel();
    throw err;
  }
  const handed = answer !== undefined && toNumber(answer.handed ?? 0) === 1;
  if (!handed) {
    runner.cancel();
    return { out, handed };
  }
  runner.take(
    leasedJobs(rows, out, queue, mark, { runUs: toNumber(answer!.run_us), dueUs: toNumber(answer!.due_us) }, runner.leaseMicros, sentAt, progress),
    sentAt,
  );
  return { out, handed };
}

/** The jobs of a leased enqueue as a claim would hand them out: attempt 1, row k's token `mark + k`, leased from `sentAt` on the local clock. */
function leasedJobs<P>(
  rows: readonly JobRow[],
  out: readonly Enqueued[],
  queue: string,
  mark: number,
  at: { runUs: number; dueUs: number },
  leaseMicros: number,
  sentAt: number,
  progress: (job: JobRef, value: unknown) => Promise<void>,
): Handed<P> {
  const leaseUntil = new Date(at.dueUs / 1000);
  const jobs = rows.map((r, k) => {
    const row: ClaimRow = {
      id: out[k]!.id,
      grp: r.group,
      conc_key: null,
      priority: r.priority,
      attempt: 1,
      max_attempts: r.maxAttempts,
      token: mark + k,
      payload: r.payload,
      run_us: at.runUs,
      due_us: at.dueUs,
      now_us: at.runUs,
    };
    const job = jobOf<P>(row, queue, mark + k, 1, leaseUntil, progress);
    leaseConfirmed(job, sentAt, leaseMicros / 1000);
    return job;
  });
  return { jobs, leaseFrom: sentAt };
}

/**
 * `rows` enqueued by one CALL that leases them to an idle worker of this process: where they may
 * be leased so (`handable`) and a napping worker of the queue reading the same tables has that
 * many free handler slots (`runnerFor`). When the queue had work waiting (the procedure made the
 * jobs ready instead), this process's workers and other processes' sleepers are rung as after
 * any enqueue (`announce`). Resolves to the enqueue's entries, or to undefined, having written
 * nothing, where it does not apply: the caller enqueues the usual way.
 */
export async function handOff(
  exec: Executor,
  t: QueueTables,
  queue: string,
  rows: readonly JobRow[],
  progress: (job: JobRef, value: unknown) => Promise<void>,
): Promise<Enqueued[] | undefined> {
  if (!handable(exec, t, rows)) return undefined;
  const runner = runnerFor(exec.state, t.jobs, queue, rows.length, exec.owner, exec.dialect.server);
  if (runner === undefined) return undefined;
  const got = await enqueueLeased(producerOf(exec), t, queue, rows, runner, progress);
  if (got === undefined) return undefined;
  purgeReceiptsNow(exec, t.receipts);
  if (!got.handed) announce(exec, t, queue, rows.length, Math.min(...rows.map((r) => r.priority)));
  return got.out;
}
