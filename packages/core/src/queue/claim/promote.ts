import { placeholderList } from '../../chunk.js';
import type { SqlConnection } from '../../port.js';
import { toNumber } from '../../validate.js';
import { keepDeadKeys } from '../model/dead-keys.js';
import { admit, lockKeys } from '../admission/limits.js';
import { DUE_ROWS, PHASE, updateById, type QueueTables } from '../model/tables.js';

/** An expired lease on the job's last attempt: the job dies instead of coming back. */
const SPENT = `\`phase\` = ${PHASE.running} AND \`attempt\` >= \`max_attempts\``;

/** A due row as `promoteDue` locks it. */
interface DueRow {
  id: unknown;
  keyed_death: unknown;
  spent: unknown;
  waiting: unknown;
  conc_key: string | null;
}

/**
 * Makes up to `limit` due delayed jobs and expired leases ready (or dead, for a lease that expired
 * on the last attempt), in the caller's transaction; resolves to the number made ready. A plain
 * read of the `claim` index range of due rows comes first (in the common case nothing is due and
 * nothing gets locked), then the rows found are locked by primary key, skipping rows others hold,
 * and updated by primary key. Jobs with a concurrency key that come due, or die, need their key's
 * lock (taken skipping keys others hold: such jobs wait for a later claim): the due ones are
 * admitted into free slots or blocked (`admit`); an expired lease that comes back keeps its slot.
 * Assignments are ordered so each reads only columns not yet assigned (MySQL assigns left to right).
 */
export async function promoteDue(conn: SqlConnection, t: QueueTables, queue: string, limit: number, joined: boolean): Promise<number> {
  // A plain read first: in the common case nothing is due and nothing is locked.
  const seen = await conn.query<{ id: unknown }>(`SELECT \`id\` FROM ${t.jobs} FORCE INDEX (\`claim\`) WHERE ${DUE_ROWS} LIMIT ${limit}`, [queue]);
  if (seen.rows.length === 0) return 0;
  const { rows } = await conn.query<DueRow>(
    `SELECT \`id\`, \`conc_key\`, (${SPENT} AND \`dedup_k\` IS NOT NULL) AS keyed_death, ${SPENT} AS spent, \`phase\` = ${PHASE.delayed} AS waiting
     FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` IN (${placeholderList(seen.rows.length)}) AND ${DUE_ROWS} FOR UPDATE SKIP LOCKED`,
    [...seen.rows.map((r) => toNumber(r.id)), queue],
  );
  if (rows.length === 0) return 0;
  const needsKey = (r: DueRow): boolean => r.conc_key !== null && (toNumber(r.waiting) === 1 || toNumber(r.spent) === 1);
  const keyed = rows.filter(needsKey);
  const limits =
    keyed.length === 0
      ? new Map<string, number>()
      : await lockKeys(
          conn,
          t,
          queue,
          keyed.map((r) => r.conc_key!),
          true,
        );
  const plain = rows.filter((r) => !needsKey(r) || (toNumber(r.spent) === 1 && limits.has(r.conc_key!)));
  const ids = plain.map((r) => toNumber(r.id));
  if (plain.some((r) => toNumber(r.keyed_death) === 1)) await keepDeadKeys(conn, t, ids, SPENT);
  if (ids.length > 0) {
    await conn.query(
      `${updateById(t.jobs)} SET
         \`last_error\` = IF(${SPENT}, CONCAT('lease expired on attempt ', \`attempt\`, ' of ', \`max_attempts\`), \`last_error\`),
         \`dedup_k\` = IF(${SPENT}, NULL, \`dedup_k\`),
         \`due_at\` = IF(${SPENT}, UTC_TIMESTAMP(6), \`run_at\`),
         \`ready_priority\` = IF(${SPENT}, 0, \`priority\`),
         \`phase\` = IF(${SPENT}, ${PHASE.dead}, ${PHASE.ready})
       WHERE \`id\` IN (${placeholderList(ids.length)})`,
      ids,
    );
  }
  if (limits.size === 0) return ids.length;
  const due = new Map<string, number[]>();
  for (const r of keyed) if (toNumber(r.waiting) === 1 && limits.has(r.conc_key!)) due.set(r.conc_key!, [...(due.get(r.conc_key!) ?? []), toNumber(r.id)]);
  // In the application's transaction the snapshot may predate the key locks: count with locking reads.
  return ids.length + (await admit(conn, t, queue, limits, due, joined));
}

/**
 * Most due rows one look takes at least, whatever the claim's limit: a claimer of one job at a
 * time would otherwise admit jobs with concurrency keys (and make due jobs ready) one per claim.
 */
export const PROMOTE_AT_LEAST = 100;
