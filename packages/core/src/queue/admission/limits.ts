import { placeholderList } from '../../chunk.js';
import type { SqlConnection } from '../../port.js';
import { intArg, optionsOf, toNumber } from '../../validate.js';
import type { Executor } from '../../engine/executor.js';
import { PHASE, updateById, type QueueTables } from '../model/tables.js';
import type { JobRef } from '../model/types.js';
import { announce } from '../wake/ring.js';
import { heldCounts, recordSlots, waitingHeads, type IdsByKey, type SlotChanges } from './key-slots.js';
import { concurrencyKeyArg } from '../model/options.js';
/** The highest concurrency limit of a key. */
export const MAX_CONCURRENCY_LIMIT = 1_000_000;
/** The limit of a key when neither it nor its queue has one set. */
export const DEFAULT_CONCURRENCY_LIMIT = 1;
/** The `conc_key` of the row that holds a queue's default limit (no key is empty). */
export const QUEUE_DEFAULT_ROW = '';

/** Limits by key, as the admission reads them. */
type Limits = ReadonlyMap<string, number>;

/** The limits of `keys` (their own, else the queue default, else 1) as the rows stand for this transaction. */
async function limitsOf(conn: SqlConnection, t: QueueTables, queue: string, keys: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await conn.query<{ conc_key: string; max_running: unknown }>(
    `SELECT \`conc_key\`, \`max_running\` FROM ${t.keys} WHERE \`queue\` = ? AND \`conc_key\` IN (${placeholderList(keys.length + 1)})`,
    [queue, QUEUE_DEFAULT_ROW, ...keys],
  );
  const own = new Map(rows.map((r) => [r.conc_key, r.max_running === null || r.max_running === undefined ? undefined : toNumber(r.max_running)]));
  const fallback = own.get(QUEUE_DEFAULT_ROW) ?? DEFAULT_CONCURRENCY_LIMIT;
  return new Map(keys.filter((k) => own.has(k)).map((k) => [k, own.get(k) ?? fallback]));
}

const insertKeys = (conn: SqlConnection, t: QueueTables, queue: string, keys: readonly string[]): Promise<unknown> =>
  conn.query(
    `INSERT IGNORE INTO ${t.keys} (\`queue\`, \`conc_key\`) VALUES ${keys.map(() => '(?, ?)').join(', ')}`,
    keys.flatMap((k) => [queue, k]),
  );

/** Writes the rows of `keys` (locking them, waiting for holders); resolves to how many exist. */
const touchKeys = async (conn: SqlConnection, t: QueueTables, queue: string, keys: readonly string[]): Promise<number> =>
  (
    await conn.query(`UPDATE ${t.keys} SET \`admissions\` = \`admissions\` + 1 WHERE \`queue\` = ? AND \`conc_key\` IN (${placeholderList(keys.length)})`, [
      queue,
      ...keys,
    ])
  ).affectedRows;

/**
 * Locks the rows of `keys` (creating missing ones) and writes them, in one order for every caller,
 * and resolves to the limit of each key locked. `skip`: keys another transaction holds are left
 * out (a claim never waits); otherwise waits for them (an ack frees a slot). The write makes two
 * admissions of one key on different cluster nodes conflict at commit, where node-local row locks
 * would not.
 */
export async function lockKeys(conn: SqlConnection, t: QueueTables, queue: string, keys: readonly string[], skip: boolean): Promise<Limits> {
  const sorted = [...new Set(keys)].sort();
  if (!skip) {
    if ((await touchKeys(conn, t, queue, sorted)) < sorted.length) {
      await insertKeys(conn, t, queue, sorted);
      await touchKeys(conn, t, queue, sorted);
    }
    return limitsOf(conn, t, queue, sorted);
  }
  const known = await limitsOf(conn, t, queue, sorted);
  const missing = sorted.filter((k) => !known.has(k));
  if (missing.length > 0) await insertKeys(conn, t, queue, missing);
  const { rows } = await conn.query<{ conc_key: string }>(
    `SELECT \`conc_key\` FROM ${t.keys} WHERE \`queue\` = ? AND \`conc_key\` IN (${placeholderList(sorted.length)})
     ORDER BY \`conc_key\` FOR UPDATE SKIP LOCKED`,
    [queue, ...sorted],
  );
  if (rows.length === 0) return new Map();
  const locked = rows.map((r) => r.conc_key);
  await touchKeys(conn, t, queue, locked);
  const limits = missing.length > 0 ? await limitsOf(conn, t, queue, locked) : known;
  return new Map(locked.map((k) => [k, limits.get(k) ?? DEFAULT_CONCURRENCY_LIMIT]));
}

/** Each key's decision: its slots filled with its blocked and due jobs, first enqueued first; the due jobs left over block. */
function decide(limits: Limits, rooms: ReadonlyMap<string, number>, blocked: IdsByKey, due: IdsByKey): Omit<SlotChanges, 'left'> {
  const hold = new Map<string, number[]>();
  const wait = new Map<string, number[]>();
  const unblocked = new Map<string, number[]>();
  for (const k of limits.keys()) {
    const waiting = due.get(k) ?? [];
    const pool = [...(blocked.get(k) ?? []), ...waiting].sort((a, b) => a - b).slice(0, rooms.get(k));
    hold.set(k, pool);
    wait.set(
      k,
      waiting.filter((id) => !pool.includes(id)),
    );
    unblocked.set(
      k,
      (blocked.get(k) ?? []).filter((id) => pool.includes(id)),
    );
  }
  return { hold, wait, unblocked };
}

/**
 * Under the key locks `limits` (from `lockKeys`): fills each key's free slots (its limit less its
 * ready and running jobs) with its blocked jobs and the `due` jobs given for it (locked by the
 * caller), first enqueued first, and blocks the due jobs that found no slot; the key's rows in
 * `<prefix>queue_keyed` record both (see `key-slots.ts`). Resolves to the number of jobs made
 * ready. MUST NOT be called without the locks: the count and the writes are one decision per key.
 */
export async function admit(conn: SqlConnection, t: QueueTables, queue: string, limits: Limits, due: IdsByKey, share: boolean): Promise<number> {
  const keys = [...limits.keys()];
  if (keys.length === 0) return 0;
  const { counts, left } = await heldCounts(conn, t, queue, keys, share);
  const rooms = new Map(keys.map((k) => [k, Math.max(0, limits.get(k)! - (counts.get(k) ?? 0))]));
  const decided = decide(limits, rooms, await waitingHeads(conn, t, queue, rooms, share), due);
  const readyIds = [...decided.hold.values()].flat();
  const blockIds = [...decided.wait.values()].flat();
  if (readyIds.length > 0) {
    await conn.query(
      `${updateById(t.jobs)} SET \`due_at\` = \`run_at\`, \`ready_priority\` = \`priority\`, \`phase\` = ${PHASE.ready}
       WHERE \`id\` IN (${placeholderList(readyIds.length)}) AND \`phase\` IN (${PHASE.delayed}, ${PHASE.blocked})`,
      readyIds,
    );
  }
  if (blockIds.length > 0) {
    await conn.query(
      `${updateById(t.jobs)} SET \`due_at\` = \`run_at\`, \`ready_priority\` = 0, \`phase\` = ${PHASE.blocked} WHERE \`id\` IN (${placeholderList(blockIds.length)}) AND \`phase\` = ${PHASE.delayed}`,
      blockIds,
    );
  }
  await recordSlots(conn, t, queue, { ...decided, left });
  return readyIds.length;
}

/**
 * After jobs of `keys` left the ready and running phases in the caller's transaction (completed,
 * dead, retrying later, released with a delay): waits for the keys' locks and admits their first
 * blocked jobs into the freed slots; resolves to the number admitted. `share`: the caller's
 * snapshot may predate the lock (the application's transaction), so the counts are locking reads.
 */
export async function freeSlots(conn: SqlConnection, t: QueueTables, queue: string, keys: readonly string[], share: boolean): Promise<number> {
  if (keys.length === 0) return 0;
  return admit(conn, t, queue, await lockKeys(conn, t, queue, keys, false), new Map(), share);
}

/**
 * The concurrency keys of `refs`: read off the `Job` objects claims return, and from the jobs'
 * rows for bare references (which may name keyed jobs). A key never changes, so a plain read is exact.
 */
export async function keysOf(conn: SqlConnection, t: QueueTables, refs: readonly JobRef[]): Promise<string[]> {
  const keys = new Set<string>();
  const unknown: number[] = [];
  for (const r of refs) {
    const k = (r as { concurrencyKey?: unknown }).concurrencyKey;
    if (typeof k === 'string') keys.add(k);
    else if (k !== null) unknown.push(r.id);
  }
  if (unknown.length > 0) {
    const { rows } = await conn.query<{ conc_key: string }>(
      `SELECT \`conc_key\` FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` IN (${placeholderList(unknown.length)}) AND \`conc_key\` IS NOT NULL`,
      unknown,
    );
    for (const r of rows) keys.add(r.conc_key);
  }
  return [...keys];
}

/** Keys per statement when a queue's default limit changes and every key is looked at again. */
const KEYS_PER_STEP = 500;

/**
 * Stores a concurrency limit (`key` undefined: the queue default; `limit` null: none) and, in the
 * same transaction, admits blocked jobs into the slots a raised limit opened: of `key`, or of every
 * key of the queue. Idempotent, so a retry after a lost reply is exact. Inside the application's
 * transaction it takes effect at that transaction's commit. Jobs it admitted are announced after
 * the commit (`announce`): idle workers of this process claim them at once, and claims draining a
 * backlog read from the head again.
 */
export async function setLimit(exec: Executor, t: QueueTables, queue: string, limit: number | null, key: string | undefined): Promise<void> {
  const admitted = await exec.transaction(
    async (conn) => {
      await conn.query(
        `INSERT INTO ${t.keys} (\`queue\`, \`conc_key\`, \`max_running\`) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE \`max_running\` = VALUES(\`max_running\`)`,
        [queue, key ?? QUEUE_DEFAULT_ROW, limit],
      );
      if (key !== undefined) return freeSlots(conn, t, queue, [key], exec.client.joined);
      let made = 0;
      for (let after = QUEUE_DEFAULT_ROW; ; ) {
        const { rows } = await conn.query<{ conc_key: string }>(
          `SELECT \`conc_key\` FROM ${t.keys} WHERE \`queue\` = ? AND \`conc_key\` > ? ORDER BY \`conc_key\` LIMIT ${KEYS_PER_STEP}`,
          [queue, after],
        );
        if (rows.length === 0) return made;
        made += await freeSlots(
          conn,
          t,
          queue,
          rows.map((r) => r.conc_key),
          exec.client.joined,
        );
        after = rows[rows.length - 1]!.conc_key;
      }
    },
    { isolation: 'READ COMMITTED' },
  );
  announce(exec, t, queue, admitted);
}

/** The limit in force for `key` (its own, else the queue default, else 1), or the queue default. Read-only. */
export async function getLimit(exec: Executor, t: QueueTables, queue: string, key: string | undefined): Promise<number> {
  const { rows } = await exec.query<{ conc_key: string; max_running: unknown }>(
    `SELECT \`conc_key\`, \`max_running\` FROM ${t.keys} WHERE \`queue\` = ? AND \`conc_key\` IN (?, ?) AND \`max_running\` IS NOT NULL`,
    [queue, QUEUE_DEFAULT_ROW, key ?? QUEUE_DEFAULT_ROW],
  );
  const own = rows.find((r) => key !== undefined && r.conc_key === key) ?? rows.find((r) => r.conc_key === QUEUE_DEFAULT_ROW);
  return own ? toNumber(own.max_running) : DEFAULT_CONCURRENCY_LIMIT;
}

/** Validated `setConcurrencyLimit` arguments. MUST throw before any SQL on bad input. */
export function limitArgs(limit: unknown, options: unknown): { limit: number | null; key: string | undefined } {
  const o = optionsOf('setConcurrencyLimit()', options, ['key']);
  return {
    limit: limit === null ? null : intArg('setConcurrencyLimit() limit', limit, 1, MAX_CONCURRENCY_LIMIT),
    key: o.key === undefined ? undefined : concurrencyKeyArg('setConcurrencyLimit() key', o.key),
  };
}
