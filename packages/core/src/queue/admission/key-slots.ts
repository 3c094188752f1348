import { placeholderList } from '../../chunk.js';
import type { SqlConnection } from '../../port.js';
import { toNumber } from '../../validate.js';
import { PHASE, type QueueTables } from '../model/tables.js';

/** A `<prefix>queue_keyed` row's `state`: its job holds a slot of its key (ready or running). */
const HOLDS = PHASE.ready;
/** A `<prefix>queue_keyed` row's `state`: its job waits for a slot (blocked). */
const WAITS = PHASE.blocked;

/** Ids by key. */
export type IdsByKey = ReadonlyMap<string, readonly number[]>;

/** What an admission writes to `<prefix>queue_keyed`, by key (see `recordSlots`). */
export interface SlotChanges {
  /** Jobs it made ready: they hold a slot. */
  readonly hold: IdsByKey;
  /** Jobs it blocked: they wait for one. */
  readonly wait: IdsByKey;
  /** Jobs whose admitted row outlived their slot (read by `heldCounts`): the row goes. */
  readonly left: IdsByKey;
  /** Blocked jobs it made ready: their blocked row goes. */
  readonly unblocked: IdsByKey;
}

/** `(state, key, id)` triples of one state. */
const triples = (state: number, ids: IdsByKey): [string, number, number][] =>
  [...ids].flatMap(([k, list]) => list.map((id): [string, number, number] => [k, state, id]));

/** Deletes the rows of `gone` (one statement, key by key), if any. */
async function dropRows(conn: SqlConnection, t: QueueTables, queue: string, gone: readonly (readonly [number, IdsByKey])[]): Promise<void> {
  const parts = gone.flatMap(([state, ids]) => [...ids].filter(([, list]) => list.length > 0).map(([k, list]) => ({ state, k, list })));
  if (parts.length === 0) return;
  await conn.query(
    `DELETE FROM ${t.keyed} WHERE \`queue\` = ? AND (${parts.map((p) => `(\`conc_key\` = ? AND \`state\` = ${p.state} AND \`id\` IN (${placeholderList(p.list.length)}))`).join(' OR ')})`,
    [queue, ...parts.flatMap((p) => [p.k, ...p.list])],
  );
}

/**
 * The ready and running jobs of each key (`counts`), read through the key's admitted rows with each
 * job's row by primary key (`share`: locking reads, for a transaction whose snapshot may be old),
 * and the jobs whose row outlived their slot (`left`: completed, dead or waiting to retry). MUST run
 * under the keys' locks (`lockKeys`): only their holders write these rows, and a job becomes ready
 * or running again only through an admission or from the other of the two phases.
 */
export async function heldCounts(
  conn: SqlConnection,
  t: QueueTables,
  queue: string,
  keys: readonly string[],
  share: boolean,
): Promise<{ counts: Map<string, number>; left: Map<string, number[]> }> {
  const { rows } = await conn.query<{ conc_key: string; id: unknown; held: unknown }>(
    `SELECT k.\`conc_key\`, k.\`id\`, COALESCE(j.\`phase\` IN (${PHASE.ready}, ${PHASE.running}), 0) AS held
     FROM ${t.keyed} AS k LEFT JOIN ${t.jobs} AS j FORCE INDEX (PRIMARY) ON j.\`id\` = k.\`id\`
     WHERE k.\`queue\` = ? AND k.\`conc_key\` IN (${placeholderList(keys.length)}) AND k.\`state\` = ${HOLDS}${share ? ' LOCK IN SHARE MODE' : ''}`,
    [queue, ...keys],
  );
  const counts = new Map<string, number>();
  const left = new Map<string, number[]>();
  for (const r of rows) {
    if (toNumber(r.held) === 1) counts.set(r.conc_key, (counts.get(r.conc_key) ?? 0) + 1);
    else left.set(r.conc_key, [...(left.get(r.conc_key) ?? []), toNumber(r.id)]);
  }
  return { counts, left };
}

/** Up to `room` blocked jobs of each key, first enqueued first (one statement for every key); see `heldCounts` for `share`. */
export async function waitingHeads(
  conn: SqlConnection,
  t: QueueTables,
  queue: string,
  rooms: ReadonlyMap<string, number>,
  share: boolean,
): Promise<Map<string, number[]>> {
  const wanted = [...rooms].filter(([, room]) => room > 0);
  const out = new Map<string, number[]>();
  if (wanted.length === 0) return out;
  const part = (room: number): string =>
    `(SELECT k.\`id\`, k.\`conc_key\` FROM ${t.keyed} AS k STRAIGHT_JOIN ${t.jobs} AS j FORCE INDEX (PRIMARY) ON j.\`id\` = k.\`id\` AND j.\`phase\` = ${PHASE.blocked}
      WHERE k.\`queue\` = ? AND k.\`conc_key\` = ? AND k.\`state\` = ${WAITS} ORDER BY k.\`id\` LIMIT ${room}${share ? ' LOCK IN SHARE MODE' : ''})`;
  const { rows } = await conn.query<{ id: unknown; conc_key: string }>(
    wanted.map(([, room]) => part(room)).join(' UNION ALL '),
    wanted.flatMap(([k]) => [queue, k]),
  );
  for (const r of rows) out.set(r.conc_key, [...(out.get(r.conc_key) ?? []), toNumber(r.id)]);
  return out;
}

/**
 * Records an admission's decisions, in its transaction and under the keys' locks (at most two
 * statements): the rows of `left` and `unblocked` go first, then `hold` and `wait` rows are written,
 * so a job that left its slot and is admitted again by the same admission keeps a row that holds.
 */
export async function recordSlots(conn: SqlConnection, t: QueueTables, queue: string, changes: SlotChanges): Promise<void> {
  await dropRows(conn, t, queue, [
    [HOLDS, changes.left],
    [WAITS, changes.unblocked],
  ]);
  const rows = [...triples(HOLDS, changes.hold), ...triples(WAITS, changes.wait)];
  if (rows.length === 0) return;
  await conn.query(
    `INSERT IGNORE INTO ${t.keyed} (\`queue\`, \`conc_key\`, \`state\`, \`id\`) VALUES ${rows.map(() => '(?, ?, ?, ?)').join(', ')}`,
    rows.flatMap((r) => [queue, ...r]),
  );
}

/** SQL true when no job of the key in `keysTable`'s row holds or waits for a slot (ready, running or blocked): a key purge's test. */
export const noJobOfKey = (t: QueueTables, keysTable: string): string =>
  `NOT EXISTS (SELECT 1 FROM ${t.keyed} AS k STRAIGHT_JOIN ${t.jobs} AS j FORCE INDEX (PRIMARY)
       ON j.\`id\` = k.\`id\` AND j.\`phase\` IN (${PHASE.ready}, ${PHASE.running}, ${PHASE.blocked})
     WHERE k.\`queue\` = ${keysTable}.\`queue\` AND k.\`conc_key\` = ${keysTable}.\`conc_key\`)`;
