import { placeholderList, slices } from '../chunk.js';
import type { SqlConnection, SqlValue } from '../port.js';
import { toNumber } from '../validate.js';
import type { ResKey } from './names.js';
import type { LockRow } from './rules.js';
import type { ResourcesTables } from './tables.js';

/** The database clock; every lease and time comes from it. */
export const NOW = 'UTC_TIMESTAMP(6)';
export { FROM_MICROS } from '../sql.js';
/** The key exists: produced and not expired. */
export const PRESENT = `(\`produced_at\` IS NOT NULL AND (\`expires_at\` IS NULL OR \`expires_at\` > ${NOW}))`;

/** Digests per IN list: far under the placeholder limit and small statements. */
export const IN_ROWS = 1000;

/** Splits `items` into runs of at most `size` (default `IN_ROWS`), keeping order. */
export function runs<T>(items: readonly T[], size = IN_ROWS): T[][] {
  return slices(items, size);
}

/** What `lockKeyRows` found. */
export interface LockedRows {
  /** Digests (binary strings) whose row exists and is now locked by this transaction. */
  readonly found: Set<string>;
  /** Digests of keys that exist (produced, not expired). */
  readonly present: Set<string>;
}

/**
 * Locks the key rows of `sorted` (ascending digest order, the one order every taskrow transaction
 * uses, so overlapping jobs wait for each other instead of deadlocking) with SELECT ... FOR UPDATE.
 * Missing rows are reported, not created: creating them here would take locks out of order. On a
 * cluster with several writable nodes this lock is local to its node: a transaction that goes on
 * to change lock rows MUST also `writeKeyRows`.
 */
export async function lockKeyRows(conn: SqlConnection, t: ResourcesTables, sorted: readonly ResKey[]): Promise<LockedRows> {
  const found = new Set<string>();
  const present = new Set<string>();
  for (const part of runs(sorted)) {
    const { rows } = await conn.query<{ h: Buffer; p: unknown }>(
      `SELECT \`h\`, ${PRESENT} AS p FROM ${t.keys} WHERE \`h\` IN (${placeholderList(part.length)}) ORDER BY \`h\` FOR UPDATE`,
      part.map((k) => k.h),
    );
    for (const r of rows) {
      const id = Buffer.from(r.h).toString('binary');
      found.add(id);
      if (toNumber(r.p) === 1) present.add(id);
    }
  }
  return { found, present };
}

/**
 * Writes the key rows `lockKeyRows` locked (`lock_seq + 1`), in digest order. MUST be called by
 * every transaction that takes locks under those key rows, before it commits: on
 * a cluster with several writable nodes (Galera, multi-primary Group Replication) a `FOR UPDATE`
 * lock is local to its node and only written rows are compared across nodes, so this write is what
 * makes a second such transaction on the same key on another node fail at COMMIT (1213 on Galera,
 * 3101 on Group Replication) and run again, when it sees the first one's lock rows. A transaction
 * that only looks (and finds the keys blocked) MUST NOT call it: its polling would make every
 * holder's acquisition lose certification to it.
 */
export async function writeKeyRows(conn: SqlConnection, t: ResourcesTables, sorted: readonly ResKey[], found: ReadonlySet<string>): Promise<void> {
  for (const part of runs(sorted.filter((k) => found.has(k.id)))) {
    await conn.query(
      `UPDATE ${t.keys} SET \`lock_seq\` = \`lock_seq\` + 1 WHERE \`h\` IN (${placeholderList(part.length)})`,
      part.map((k) => k.h),
    );
  }
}

/** Creates the missing key rows (not existing, no lock), in autocommit, in digest order. */
export async function createKeyRows(
  query: (sql: string, params: SqlValue[]) => Promise<unknown>,
  t: ResourcesTables,
  sorted: readonly ResKey[],
): Promise<void> {
  for (const part of runs(sorted, 200)) {
    // IGNORE skips only duplicates: digests are exactly 16 bytes and keys were checked against the
    // column width, so nothing can be truncated or coerced.
    await query(
      `INSERT IGNORE INTO ${t.keys} (\`h\`, \`k\`) VALUES ${part.map(() => '(?, ?)').join(', ')}`,
      part.flatMap((k) => [k.h, k.bytes]),
    );
  }
}

/** The lock rows of some keys, with liveness judged by the database clock. */
export async function readLocks(conn: SqlConnection, t: ResourcesTables, keys: readonly ResKey[]): Promise<LockRow[]> {
  const out: LockRow[] = [];
  for (const part of runs(keys)) {
    const { rows } = await conn.query<{ h: Buffer; holder: Buffer; mode: string; live: unknown }>(
      `SELECT \`h\`, \`holder\`, \`mode\`, \`lease_until\` > ${NOW} AS live FROM ${t.locks} WHERE \`h\` IN (${placeholderList(part.length)})`,
      part.map((k) => k.h),
    );
    for (const r of rows) {
      out.push({
        id: Buffer.from(r.h).toString('binary'),
        holder: Buffer.from(r.holder).toString('binary'),
        mode: r.mode === 'writer' ? 'writer' : 'reader',
        live: toNumber(r.live) === 1,
      });
    }
  }
  return out;
}

/** The lock rows one holder has, live or not. */
export async function holderLocks(conn: SqlConnection, t: ResourcesTables, holder: Buffer): Promise<LockRow[]> {
  const { rows } = await conn.query<{ h: Buffer; mode: string; live: unknown }>(
    `SELECT \`h\`, \`mode\`, \`lease_until\` > ${NOW} AS live FROM ${t.locks} WHERE \`holder\` = ?`,
    [holder],
  );
  const id = holder.toString('binary');
  return rows.map((r) => ({
    id: Buffer.from(r.h).toString('binary'),
    holder: id,
    mode: r.mode === 'writer' ? 'writer' : 'reader',
    live: toNumber(r.live) === 1,
  }));
}

/** Deletes lock rows by primary key (point deletes only, so no range or gap locks). */
export async function deleteLockRows(conn: SqlConnection, t: ResourcesTables, rows: readonly { h: Buffer; holder: Buffer }[]): Promise<number> {
  let n = 0;
  for (const part of runs(rows, 500)) {
    const res = await conn.query(
      `DELETE FROM ${t.locks} WHERE ${part.map(() => '(`h` = ? AND `holder` = ?)').join(' OR ')}`,
      part.flatMap((r) => [r.h, r.holder]),
    );
    n += res.affectedRows;
  }
  return n;
}

/** `id` (binary string) back to a Buffer. */
export const bin = (id: string): Buffer => Buffer.from(id, 'binary');
