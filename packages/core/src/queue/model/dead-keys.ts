import { placeholderList } from '../../chunk.js';
import type { SqlConnection } from '../../port.js';
import type { QueueTables } from './tables.js';

/**
 * Keeps the dedup keys of the jobs `ids` that are about to die (`dying`: an SQL condition on the
 * job row), in the caller's transaction, before the statement that clears them. Jobs without a
 * key are skipped.
 */
export async function keepDeadKeys(conn: SqlConnection, t: QueueTables, ids: readonly number[], dying = 'TRUE'): Promise<void> {
  if (ids.length === 0) return;
  await conn.query(
    `INSERT INTO ${t.deadKeys} (\`id\`, \`dedup_k\`)
     SELECT \`id\`, \`dedup_k\` FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` IN (${placeholderList(ids.length)}) AND \`dedup_k\` IS NOT NULL AND ${dying}
     ON DUPLICATE KEY UPDATE \`dedup_k\` = VALUES(\`dedup_k\`)`,
    ids,
  );
}

/** The kept keys of dead jobs `ids`: id -> key. */
export async function deadKeysOf(conn: SqlConnection, t: QueueTables, ids: readonly number[]): Promise<Map<number, Buffer>> {
  const { rows } = await conn.query<{ id: unknown; dedup_k: Buffer }>(
    `SELECT \`id\`, \`dedup_k\` FROM ${t.deadKeys} WHERE \`id\` IN (${placeholderList(ids.length)})`,
    ids,
  );
  return new Map(rows.map((r) => [Number(r.id), Buffer.from(r.dedup_k)]));
}

/** Forgets the kept keys of `ids` (re-driven or deleted jobs). */
export async function dropDeadKeys(conn: SqlConnection, t: QueueTables, ids: readonly number[]): Promise<void> {
  if (ids.length > 0) await conn.query(`DELETE FROM ${t.deadKeys} WHERE \`id\` IN (${placeholderList(ids.length)})`, ids);
}
