import { slot } from '../../instance.js';
import { randomInt } from 'node:crypto';
import { chunks, placeholderList, statementBytes } from '../../chunk.js';
import type { Executor } from '../../engine/executor.js';
import { invalid, TaskrowError } from '../../errors.js';
import type { SqlConnection, SqlResult, SqlValue } from '../../port.js';
import { purgeReceiptsNow, readReceipt, receiptToken, writeReceipt, writeReceiptIf } from '../../receipts/receipts.js';
import { show, toNumber } from '../../validate.js';
import { NAME_PATTERN } from '../../names.js';
import { binaryLiteral } from '../../sql.js';
import { callable, enqueueByCall } from './call.js';
import { batchCallable, enqueueManyByCall } from './many-call.js';
import type { RingInCall } from '../wake/ring-in-call.js';
import { decodeEnqueued, encodeEnqueued } from './enqueued-text.js';
import { jobRow, plainJobRow, startState, type JobRow, type QueueSettings } from '../model/options.js';
import { keyHex, liveHolders, takeKeys } from './dedup.js';
import { deleteById, type QueueTables } from '../model/tables.js';
import type { Enqueued, EnqueueItem } from '../model/types.js';
import { dueFrom, insertInto, jobValues, type JobValues } from './insert.js';

/** Rows per INSERT: at most 12 placeholders each, far under 65,535. */
const INSERT_ROWS = 1000;
/** Most jobs one enqueueMany call takes (one transaction). */
export const MAX_ENQUEUE_BATCH = 100_000;

/**
 * One row's values (see `insert.ts`): the names and integers as literals (validated: names match
 * `NAME_PATTERN`, which has no quote or backslash, and numbers are safe integers) and the dedup key
 * as a hex literal, placeholders only for the payload, the concurrency key and a time of its own,
 * so a batch of 1,000 rows is not 12,000 values for the client to escape. A row with a time of its
 * own (`runAt` or a delay) computes `due_at` and `run_at` repeats it; a row due now takes the
 * statement's one time. Its parameters go to `params` in column order (time, payload, key).
 */
function rowValues(queue: string, r: JobRow, mark: number, params: SqlValue[]): JobValues {
  const [phase, priority, readyPriority] = startState(r);
  const at = r.runAt !== null || r.delayMicros !== 0;
  if (at) params.push(r.runAt);
  params.push(r.payload);
  if (r.concKey !== null) params.push(r.concKey);
  return {
    queue: nameLiteral(queue),
    grp: nameLiteral(r.group),
    phase: int(phase),
    priority: int(priority),
    ready_priority: int(readyPriority),
    // The routines' `dueAt` with its IF decided here, where the run time and the delay are known.
    due_at: at ? dueFrom('?', int(r.delayMicros)) : 'UTC_TIMESTAMP(6)',
    run_at: at ? '`due_at`' : 'UTC_TIMESTAMP(6)',
    max_attempts: int(r.maxAttempts),
    token: int(mark),
    dedup_k: r.dedup === null ? 'NULL' : binaryLiteral(r.dedup),
    payload: '?',
    conc_key: r.concKey === null ? 'NULL' : '?',
    created_at: 'UTC_TIMESTAMP(6)',
  };
}

/** A safe integer as SQL text; anything else is a bug upstream of the INSERT, refused. */
function int(n: number): string {
  if (!Number.isSafeInteger(n)) throw invalid(`an enqueue's row carries ${show(n)} where an integer belongs`);
  return String(n);
}

/** A validated name (queue, group; `NAME_PATTERN`, or '' for no group) as a quoted SQL literal; anything else is refused. */
function nameLiteral(name: string): string {
  if (name !== '' && !NAME_PATTERN.test(name)) throw invalid(`an enqueue's row carries the name ${show(name)} outside the name rule (${NAME_PATTERN.source})`);
  return `'${name}'`;
}

/** Validates a batch whole, before any SQL. */
export function jobRows(items: unknown, settings: QueueSettings): JobRow[] {
  if (items === null || typeof items !== 'object' || !(Symbol.iterator in items) || typeof items === 'string') {
    throw invalid(`enqueueMany() expects an iterable of { payload, ...options }, got ${show(items)}`);
  }
  if (Array.isArray(items) && items.length > MAX_ENQUEUE_BATCH) {
    throw invalid(`enqueueMany() takes at most ${MAX_ENQUEUE_BATCH} jobs per call, got ${items.length}`);
  }
  const rows: JobRow[] = [];
  let i = 0;
  for (const item of items as Iterable<EnqueueItem<unknown>>) {
    if (item === null || typeof item !== 'object' || !('payload' in item)) throw invalid(`jobs[${i}] must be an object with a payload, got ${show(item)}`);
    rows.push(itemRow(item, settings, `enqueueMany() jobs[${i}]`));
    if (++i > MAX_ENQUEUE_BATCH) throw invalid(`enqueueMany() takes at most ${MAX_ENQUEUE_BATCH} jobs per call, got more than that from an iterable`);
  }
  return rows;
}

/** One `enqueueMany()` item's row: a bare `{ payload }` (no other own key) skips the options' checks. */
function itemRow(item: EnqueueItem<unknown>, settings: QueueSettings, what: string): JobRow {
  for (const k in item) {
    if (k !== 'payload' || !Object.hasOwn(item, k)) {
      const { payload, ...options } = item;
      return jobRow(payload, options, settings, what);
    }
  }
  return plainJobRow(item.payload, settings, what);
}

/**
 * Inserts validated rows: every row or none. Rows with a dedup key whose live job exists are not
 * inserted; their entry carries the live job's id. Resolves to one entry per row, in order. It is
 * one transaction, so the new rows stay invisible to claimers until their ids were read back, and
 * it ends with a receipt of its result (see `receipts.ts`): a run retried after a lost connection
 * reads the receipt first and, when the lost run committed, returns its result instead of
 * inserting again, so a lost reply never enqueues a job twice. Inside `taskrow.in(tx)` the rows
 * join the application's transaction (no receipt: nothing is retried there). With dedup keys it
 * runs at READ COMMITTED: taking a key (`dedup.ts`) then writes its row as last committed (under
 * REPEATABLE READ, MariaDB 11.6+ snapshot isolation fails that write with error 1020 when another
 * enqueue of the same key committed after the snapshot). `started` is called as each run begins
 * inside its transaction (its connection taken, BEGIN sent), never on a joined client. One job
 * without a dedup key is one statement instead (`call.ts`: the same transaction and
 * receipt, run by a procedure) where the schema has it,
 * and so is a small batch without dedup keys (`many-call.ts`); with `ring`, one job's statement
 * also rings the queue's doorbell after its commit (`handoff/hand-call.ts`).
 */
export async function insertJobs(
  exec: Executor,
  t: QueueTables,
  queue: string,
  rows: readonly JobRow[],
  ahead?: { started?: () => void; ring?: RingInCall },
): Promise<Enqueued[]> {
  if (rows.length === 0) return [];
  const started = ahead?.started;
  const called = callable(exec, t, rows)
    ? await enqueueByCall(exec, t, queue, rows[0]!, ahead?.ring)
    : batchCallable(exec, t, rows)
      ? await enqueueManyByCall(exec, t, queue, rows)
      : undefined;
  if (called !== undefined) {
    purgeReceiptsNow(exec, t.receipts);
    return called;
  }
  const bytes = statementBytes(exec.dialect.maxAllowedPacket);
  const parts = [
    ...chunks(rows, { maxRows: INSERT_ROWS, maxBytes: bytes }, (r) => r.payloadBytes + (r.dedup?.length ?? 0) * 2 + (r.concKey?.length ?? 0) * 4 + 200),
  ];
  const keyed = rows.some((r) => r.dedup);
  const returning = exec.dialect.insertReturning;
  const insertAll = async (conn: SqlConnection): Promise<Enqueued[]> => {
    const out: Enqueued[] = [];
    for (const part of parts) out.push(...(await insertChunk(conn, t, queue, part, returning)));
    return out;
  };
  if (exec.client.joined) return exec.transaction(insertAll);
  const token = receiptToken();
  const consecutive = !keyed && parts.length === 1 && rows.length > 1 && !exec.dialect.multiWriter && !exec.state.get(IDS_APART).found;
  // READ COMMITTED where the transaction reads: the taking of dedup keys (see above), and the
  // consecutive-ids check, which is then a consistent read that locks nothing (at REPEATABLE READ
  // its range would take shared next-key locks up to the index's end and stall every other
  // producer's INSERT until this transaction ends).
  const out = await exec.attempts(
    (attempt) => async (conn) => {
      started?.();
      const before = attempt.afterLost ? await readReceipt(conn, t.receipts, token) : undefined;
      if (before !== undefined) return decodeEnqueued(before);
      if (consecutive) return insertConsecutive(exec, conn, t, queue, rows, token);
      const done = await insertAll(conn);
      await writeReceipt(conn, t.receipts, token, encodeEnqueued(done));
      return done;
    },
    keyed || consecutive ? { isolation: 'READ COMMITTED' } : {},
  );
  purgeReceiptsNow(exec, t.receipts);
  return out;
}

/** Whether a batch's ids were found not to be consecutive on the instance's server: its batches then read their ids back. */
const IDS_APART = slot('batch ids found apart', () => ({ found: false }));

/**
 * A batch without dedup keys in one statement on MySQL (one writer, no `RETURNING`): its ids are
 * taken as consecutive from the insert id, and the receipt confirms that in the same statement
 * (`writeReceiptIf`: written only when the row at the range's last id is this INSERT's last row,
 * told by its token, the mark plus its place in the batch; a consistent read of one row by primary
 * key at READ COMMITTED, so nothing is locked, where a read of the whole range took 0.85 ms of
 * server time for 1,000 rows on MySQL 9.7). Four statements (BEGIN, INSERT, receipt, COMMIT).
 * When the ids were not consecutive (`auto_increment_increment` above 1, or ids interleaved with
 * another statement's), they are read back by their tokens and the receipt written plainly, and
 * the server's later batches read their ids back from the start.
 */
async function insertConsecutive(
  exec: Executor,
  conn: SqlConnection,
  t: QueueTables,
  queue: string,
  rows: readonly JobRow[],
  token: Buffer,
): Promise<Enqueued[]> {
  const { res, mark } = await insertStatement(conn, t, queue, rows, false, true);
  const taken = rows.map((_, i) => ({ id: res.insertId + i, deduplicated: false }));
  // Row k carries the token mark + k, and ids grow in VALUES order from the insert id: the last
  // row found at the range's last id means the n rows fill the n ids of the range.
  const mine = `FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` = ? AND \`token\` = ? AND \`queue\` = ?`;
  const last = [res.insertId + rows.length - 1, mark + rows.length - 1, queue];
  if (res.insertId > 0 && (await writeReceiptIf(conn, t.receipts, token, encodeEnqueued(taken), mine, last, 1))) return taken;
  exec.state.get(IDS_APART).found = true;
  const inserted = await newIds(conn, t, queue, rows, res, mark, false, true);
  const out = rows.map((r) => ({ id: inserted.get(r)!, deduplicated: false }));
  await writeReceipt(conn, t.receipts, token, encodeEnqueued(out));
  return out;
}

/**
 * Inserts `insert` in one statement and resolves to the new rows' ids, by row. One new row's id is
 * the insert id. More come back with the INSERT itself where the server can (`returning`:
 * MariaDB's `RETURNING`), or are read back by the statement's mark.
 */
async function insertRows(conn: SqlConnection, t: QueueTables, queue: string, insert: readonly JobRow[], returning: boolean): Promise<Map<JobRow, number>> {
  const withIds = returning && insert.length > 1;
  const { res, mark } = await insertStatement(conn, t, queue, insert, withIds);
  return newIds(conn, t, queue, insert, res, mark, withIds);
}

/**
 * The INSERT of `insert` (see `insertRows`); resolves to its result and its mark. With `ordinal`,
 * row k's token is the mark + k (see `insertConsecutive`), else every row's is the mark.
 */
async function insertStatement(
  conn: SqlConnection,
  t: QueueTables,
  queue: string,
  insert: readonly JobRow[],
  withIds: boolean,
  ordinal = false,
): Promise<{ res: SqlResult<{ id: unknown }>; mark: number }> {
  // A random start for the fencing token doubles as this statement's mark: the ids of the new
  // rows are read back by it (auto-increment ids of one statement need not be consecutive).
  const mark = randomInt(1, 2 ** 47);
  const params: SqlValue[] = [];
  const values = insert.map((r, k) => rowValues(queue, r, ordinal ? mark + k : mark, params));
  const rows = values.map((v) => `(${jobValues(v)})`).join(', ');
  const res = await conn.query<{ id: unknown }>(`${insertInto(t.jobs, values[0]!)} VALUES ${rows}${withIds ? ' RETURNING `id`' : ''}`, params);
  return { res, mark };
}

/** The ids of the rows an INSERT of `insert` (see `insertRows`) added, by row. */
async function newIds(
  conn: SqlConnection,
  t: QueueTables,
  queue: string,
  insert: readonly JobRow[],
  res: SqlResult<{ id: unknown }>,
  mark: number,
  withIds: boolean,
  ordinal = false,
): Promise<Map<JobRow, number>> {
  // Ids grow in the order the rows were inserted, which is the order of the VALUES.
  let ids: number[];
  if (withIds) ids = res.rows.map((r) => toNumber(r.id));
  else if (insert.length === 1) ids = [res.insertId];
  else {
    const back = await conn.query<{ id: unknown }>(
      `SELECT \`id\` FROM ${t.jobs} WHERE \`id\` >= ? AND \`token\` BETWEEN ? AND ? AND \`queue\` = ? ORDER BY \`id\` LIMIT ${insert.length}`,
      [res.insertId, mark, ordinal ? mark + insert.length - 1 : mark, queue],
    );
    ids = back.rows.map((r) => toNumber(r.id));
  }
  ids.sort((a, b) => a - b);
  if (ids.length !== insert.length || !(ids[0]! > 0))
    throw new TaskrowError('DATABASE_ERROR', `enqueue got ${ids.length} ids back for ${insert.length} new jobs (queue ${JSON.stringify(queue)})`);
  return new Map(insert.map((r, i) => [r, ids[i]!]));
}

/**
 * Inserts one chunk: jobs without a dedup key, and the first job of each key that no live job
 * holds (a plain read); then takes the keys of the new keyed jobs (`takeKeys`). A new job whose
 * key a live job took first (a concurrent enqueue) is deleted again in the same transaction and
 * reported deduplicated, with the holder's id.
 */
async function insertChunk(conn: SqlConnection, t: QueueTables, queue: string, part: readonly JobRow[], returning: boolean): Promise<Enqueued[]> {
  const keyed = part.filter((r) => r.dedup);
  const holders = await liveHolders(conn, t, queue, [...new Map(keyed.map((r) => [keyHex(r.dedup!), r.dedup!])).values()]);
  // Which rows to insert: unkeyed ones, and the first of each key that has no live job.
  const firstOfKey = new Set<string>();
  const insert = part.filter((r) => {
    if (r.dedup === null) return true;
    const k = keyHex(r.dedup);
    if (holders.has(k) || firstOfKey.has(k)) return false;
    firstOfKey.add(k);
    return true;
  });
  const inserted = insert.length > 0 ? await insertRows(conn, t, queue, insert, returning) : new Map<JobRow, number>();
  const wants = insert.filter((r) => r.dedup).map((r) => ({ key: r.dedup!, id: inserted.get(r)! }));
  for (const [k, id] of await takeKeys(conn, t, queue, wants)) holders.set(k, id);
  const lost = wants.filter((w) => holders.get(keyHex(w.key)) !== w.id).map((w) => w.id);
  if (lost.length > 0) await conn.query(`${deleteById(t.jobs)} WHERE \`id\` IN (${placeholderList(lost.length)})`, lost);
  return part.map((r) => {
    const own = inserted.get(r);
    if (own !== undefined && !lost.includes(own)) return { id: own, deduplicated: false };
    const id = r.dedup === null ? undefined : holders.get(keyHex(r.dedup));
    if (id === undefined) throw new TaskrowError('DATABASE_ERROR', `enqueue could not find the live job of a dedup key (queue ${JSON.stringify(queue)})`);
    return { id, deduplicated: true };
  });
}
