import { slot } from '../instance.js';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Executor } from '../engine/executor.js';
import type { SqlConnection, SqlValue } from '../port.js';

/** How long a receipt is kept: far longer than any retry of the write it records can take. */
export const RECEIPT_HOURS = 24;
/** How often (ms) one executor deletes receipts past `RECEIPT_HOURS`, at most. */
const PURGE_EVERY_MS = 10 * 60_000;
/** Receipts deleted per purge statement. */
const PURGE_ROWS = 1000;

/** A new receipt token: 16 random bytes. */
export function receiptToken(): Buffer {
  return randomBytes(16);
}

/**
 * Records, inside the write's own transaction, that the write with `token` committed and what it
 * returned (`result`, ASCII text of the caller's encoding). MUST be the write's last statement
 * before COMMIT, so that a reader of the receipt either waits for that transaction or sees it ended.
 */
export async function writeReceipt(conn: SqlConnection, table: string, token: Buffer, result: string): Promise<void> {
  await conn.query(`INSERT INTO ${table} (\`token\`, \`made_at\`, \`result\`) VALUES (?, UTC_TIMESTAMP(6), ?)`, [token, result]);
}

/**
 * As `writeReceipt`, written only when `from` (a `FROM ... WHERE ...` clause with its `params`)
 * finds exactly `count` rows: one statement records the write and confirms what the write took for
 * granted. Resolves to whether the receipt was written; when it was not, the caller MUST find out
 * what its write did and then call `writeReceipt`.
 */
export async function writeReceiptIf(
  conn: SqlConnection,
  table: string,
  token: Buffer,
  result: string,
  from: string,
  params: readonly SqlValue[],
  count: number,
): Promise<boolean> {
  const res = await conn.query(`INSERT INTO ${table} (\`token\`, \`made_at\`, \`result\`) SELECT ?, UTC_TIMESTAMP(6), ? ${from} HAVING COUNT(*) = ?`, [
    token,
    result,
    ...params,
    count,
  ]);
  return res.affectedRows === 1;
}

/**
 * Reads the receipt of `token` with a locking read, in the caller's transaction: when the write
 * that made it has sent its COMMIT but not finished, this waits for it. Resolves to the recorded
 * result, or undefined when the write never committed (it rolled back, or never got that far; a
 * write whose connection is gone can no longer commit).
 */
export async function readReceipt(conn: SqlConnection, table: string, token: Buffer): Promise<string | undefined> {
  const { rows } = await conn.query<{ result: unknown }>(`SELECT \`result\` FROM ${table} WHERE \`token\` = ? FOR UPDATE`, [token]);
  const r = rows[0]?.result;
  return r === undefined ? undefined : Buffer.isBuffer(r) ? r.toString('latin1') : String(r);
}

const LAST_PURGE = slot('receipts purged at', () => ({ at: -Infinity }));

/**
 * Deletes receipts older than `RECEIPT_HOURS`, at most once per `PURGE_EVERY_MS` per taskrow instance, in
 * the background (see `InstanceState.background`): never awaited by the write that triggered it,
 * errors ignored (the next purge catches up), awaited by `close()`. Not inside an application transaction.
 */
export function purgeReceiptsNow(exec: Executor, table: string): void {
  if (exec.client.joined) return;
  const now = performance.now();
  const last = exec.state.get(LAST_PURGE);
  if (now - last.at < PURGE_EVERY_MS) return;
  last.at = now;
  exec.state.background(() =>
    exec.query(`DELETE FROM ${table} WHERE \`made_at\` < UTC_TIMESTAMP(6) - INTERVAL ${RECEIPT_HOURS} HOUR ORDER BY \`made_at\` LIMIT ${PURGE_ROWS}`),
  );
}
