import { placeholderList } from '../../chunk.js';
import type { Executor } from '../../engine/executor.js';
import type { SqlConnection } from '../../port.js';
import { toNumber } from '../../validate.js';
import type { QueueTables } from '../model/tables.js';
import { purgeAllWindows, throttledPurge, type PurgeWindow } from '../admission/windows.js';

/** A dedup key's index form as a map key: its bytes in hex. */
export const keyHex = (b: Buffer | Uint8Array): string => Buffer.from(b).toString('hex');

/**
 * The live jobs of `queue` holding these keys (index forms): hex -> id. A plain read: what was
 * committed when it ran (inside an application's transaction, its snapshot). A key whose last
 * taker finished or died is not among them. The key rows are read first (`STRAIGHT_JOIN`: with
 * few rows the optimiser may otherwise scan the jobs table), each job by primary key.
 */
export async function liveHolders(conn: SqlConnection, t: QueueTables, queue: string, keys: readonly Buffer[]): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  if (keys.length === 0) return found;
  const { rows } = await conn.query<{ id: unknown; dedup_k: Buffer }>(
    `SELECT d.\`dedup_k\`, d.\`id\` FROM ${t.dedup} AS d STRAIGHT_JOIN ${t.jobs} AS j FORCE INDEX (PRIMARY) ON j.\`id\` = d.\`id\` AND j.\`queue\` = d.\`queue\` AND j.\`dedup_k\` = d.\`dedup_k\`
     WHERE d.\`queue\` = ? AND d.\`dedup_k\` IN (${placeholderList(keys.length)})`,
    [queue, ...keys],
  );
  for (const r of rows) found.set(keyHex(r.dedup_k), toNumber(r.id));
  return found;
}

/** A job of the caller's transaction that wants a dedup key. */
export interface KeyWant {
  readonly key: Buffer;
  readonly id: number;
}

/**
 * Takes each wanted key for its job, in the caller's transaction, and resolves to the job that
 * holds each key afterwards (hex -> id): the wanting job when the key was free (no row, or a row
 * whose job no longer holds it), else the live job that holds it. Every key's row stays locked
 * (exclusively) until the caller's transaction ends, so two takers of a key are serialised; its
 * holder's job row is read with a shared lock, so a holder finishing meanwhile is waited for and
 * seen finished. The caller MUST write the won keys into its jobs' `dedup_k` in the same
 * transaction (a new job carries it already) and MUST NOT make a job that lost live. Keys are
 * taken in key order, so two takers of overlapping sets wait instead of deadlocking; a deadlock
 * or a certification conflict (two cluster nodes) rolls the loser back to retry.
 */
export async function takeKeys(conn: SqlConnection, t: QueueTables, queue: string, wants: readonly KeyWant[]): Promise<Map<string, number>> {
  const holders = new Map<string, number>();
  if (wants.length === 0) return holders;
  const sorted = [...wants].sort((a, b) => Buffer.compare(a.key, b.key));
  // A row already there is written too (`met`), so it counts 2 in the affected rows whatever the
  // client's found-rows flag: all new (the common case) needs no read.
  const { affectedRows } = await conn.query(
    `INSERT INTO ${t.dedup} (\`queue\`, \`dedup_k\`, \`id\`) VALUES ${sorted.map(() => '(?, ?, ?)').join(', ')} ON DUPLICATE KEY UPDATE \`met\` = \`met\` + 1`,
    sorted.flatMap((w) => [queue, w.key, w.id]),
  );
  if (affectedRows === sorted.length) {
    for (const w of sorted) holders.set(keyHex(w.key), w.id);
    return holders;
  }
  const { rows } = await conn.query<{ dedup_k: Buffer; id: unknown; held: Buffer | null }>(
    `SELECT d.\`dedup_k\`, d.\`id\`, j.\`dedup_k\` AS held FROM ${t.dedup} AS d LEFT JOIN ${t.jobs} AS j FORCE INDEX (PRIMARY) ON j.\`id\` = d.\`id\` AND j.\`queue\` = d.\`queue\`
     WHERE d.\`queue\` = ? AND d.\`dedup_k\` IN (${placeholderList(sorted.length)}) LOCK IN SHARE MODE`,
    [queue, ...sorted.map((w) => w.key)],
  );
  const want = new Map(sorted.map((w) => [keyHex(w.key), w]));
  const stale: KeyWant[] = [];
  for (const r of rows) {
    const k = keyHex(r.dedup_k);
    const w = want.get(k);
    if (!w) continue;
    const id = toNumber(r.id);
    if (id === w.id || (r.held !== null && keyHex(r.held) === k)) holders.set(k, id);
    else stale.push(w);
  }
  if (stale.length > 0) {
    await conn.query(
      `UPDATE ${t.dedup} SET \`id\` = CASE \`dedup_k\`${' WHEN ? THEN ?'.repeat(stale.length)} END WHERE \`queue\` = ? AND \`dedup_k\` IN (${placeholderList(stale.length)})`,
      [...stale.flatMap((w) => [w.key, w.id]), queue, ...stale.map((w) => w.key)],
    );
    for (const w of stale) holders.set(keyHex(w.key), w.id);
  }
  return holders;
}

/** Key rows one purge transaction looks at, at most (one range of the primary key). */
const DEDUP_WINDOW = 5000;

/** How often (ms) a process's workers purge a window of a queue's dedup rows, at most. */
const DEDUP_PURGE_EVERY_MS = 60_000;

/**
 * In one READ COMMITTED transaction, deletes the `<prefix>queue_dedup` rows of `queue` among the
 * next `DEDUP_WINDOW` keys after `after` (in key order) whose job no longer holds them (it
 * finished, died or is gone). Resolves to the number deleted and the key to go on after,
 * undefined when the window reached the last key. The rows are locked before their jobs are read
 * (with a shared lock): a job only comes to hold a key through its row, so a row found stale
 * under its lock stays stale, and a taker holding the row is waited for.
 */
async function purgeWindow(exec: Executor, t: QueueTables, queue: string, after: Buffer): Promise<PurgeWindow<Buffer>> {
  return exec.transaction(
    async (conn) => {
      const { rows: span } = await conn.query<{ n: unknown; last: Buffer | null }>(
        `SELECT COUNT(*) AS n, MAX(w.\`dedup_k\`) AS last FROM (
         SELECT \`dedup_k\` FROM ${t.dedup} WHERE \`queue\` = ? AND \`dedup_k\` > ? ORDER BY \`dedup_k\` LIMIT ${DEDUP_WINDOW}) AS w`,
        [queue, after],
      );
      const last = span[0]?.last;
      if (last === null || last === undefined) return { deleted: 0, next: undefined };
      const next = toNumber(span[0]!.n) < DEDUP_WINDOW ? undefined : Buffer.from(last);
      const { rows: seen } = await conn.query<{ dedup_k: Buffer }>(
        `SELECT d.\`dedup_k\` FROM ${t.dedup} AS d LEFT JOIN ${t.jobs} AS j FORCE INDEX (PRIMARY) ON j.\`id\` = d.\`id\` AND j.\`queue\` = d.\`queue\` AND j.\`dedup_k\` = d.\`dedup_k\`
       WHERE d.\`queue\` = ? AND d.\`dedup_k\` > ? AND d.\`dedup_k\` <= ? AND j.\`id\` IS NULL`,
        [queue, after, last],
      );
      if (seen.length === 0) return { deleted: 0, next };
      const keys = seen.map((r) => Buffer.from(r.dedup_k));
      const { rows: locked } = await conn.query<{ dedup_k: Buffer; id: unknown }>(
        `SELECT \`dedup_k\`, \`id\` FROM ${t.dedup} WHERE \`queue\` = ? AND \`dedup_k\` IN (${placeholderList(keys.length)}) FOR UPDATE`,
        [queue, ...keys],
      );
      const ids = [...new Set(locked.map((r) => toNumber(r.id)))];
      const { rows: jobs } =
        ids.length === 0
          ? { rows: [] }
          : await conn.query<{ id: unknown; dedup_k: Buffer | null }>(
              `SELECT \`id\`, \`dedup_k\` FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` IN (${placeholderList(ids.length)}) AND \`queue\` = ? AND \`dedup_k\` IS NOT NULL LOCK IN SHARE MODE`,
              [...ids, queue],
            );
      const holds = new Set(jobs.map((j) => `${toNumber(j.id)}:${keyHex(j.dedup_k!)}`));
      const stale = locked.filter((r) => !holds.has(`${toNumber(r.id)}:${keyHex(r.dedup_k)}`)).map((r) => Buffer.from(r.dedup_k));
      const deleted =
        stale.length === 0
          ? 0
          : (await conn.query(`DELETE FROM ${t.dedup} WHERE \`queue\` = ? AND \`dedup_k\` IN (${placeholderList(stale.length)})`, [queue, ...stale]))
              .affectedRows;
      return { deleted, next };
    },
    { isolation: 'READ COMMITTED' },
  );
}

/** Deletes every dedup row of `queue` that `purgeWindow` would, window after window. Resolves to the number deleted. */
export function purgeStaleKeys(exec: Executor, t: QueueTables, queue: string): Promise<number> {
  return purgeAllWindows<Buffer>(Buffer.alloc(0), (after) => purgeWindow(exec, t, queue, after));
}

/** One `purgeWindow` of a queue, at most once per `DEDUP_PURGE_EVERY_MS` per taskrow instance and queue (see `throttledPurge`). */
export const purgeStaleKeysNow = throttledPurge<Buffer>('stale dedup keys', DEDUP_PURGE_EVERY_MS, Buffer.alloc(0), purgeWindow);
