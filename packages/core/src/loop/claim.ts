import type { SqlConnection } from '../port.js';
import { toNumber, toNumberOrNull } from '../validate.js';
import type { IdCodec } from './ids.js';
import type { ClaimFrom, LoopSql } from './sql.js';
import type { LoopId } from './types.js';

/** A row of `LoopSql.heads`. */
export interface HeadRow {
  p: unknown;
  k1: unknown;
  k2: unknown;
  v: unknown;
}

/** Up to `limit` due ids, locked by one locking read from the start of each step's range. */
async function takeFromStart(conn: SqlConnection, r: { codec: IdCodec; sql: LoopSql }, limit: number, minLoopTime: number): Promise<LoopId[]> {
  const { rows } = await conn.query<{ v: unknown }>(r.sql.claim(limit), [minLoopTime]);
  return rows.map((row) => r.codec.decode(row.v));
}

/**
 * Takes up to `limit` due ids in `conn`'s transaction (locks them; the caller then leases them).
 * Without `plainFirst`: one locking read (`SKIP LOCKED`) from the start of each step's range.
 * With it (`dialect.plainReadFirst`, outside the application's transaction): a plain read of
 * where each step's due ids start, then a locking read from there.
 *
 * Starting from the first due row, not from the start of the index range, spares the locking
 * read the entries of ids taken or done since InnoDB last purged: a plain read passes them
 * cheaply, MariaDB's locking reads look each one up in the table (on MariaDB 10.11 a `get(100)`
 * walked thousands of them: 8 ms instead of 1). Ids that become due before the start while a `get`
 * runs are left to a later `get`.
 *
 * MUST only take rows a locking read matched: the plain read decides where to look, never what
 * is taken. MUST NOT come back empty while a due id is free: when every row from the starts is
 * held, it reads the whole ranges. A `get` that loses a race for the same ids sees fewer ids,
 * never an id another transaction holds.
 */
export async function takeDue(
  conn: SqlConnection,
  r: { codec: IdCodec; sql: LoopSql },
  limit: number,
  minLoopTime: number,
  plainFirst: boolean,
): Promise<LoopId[]> {
  if (!plainFirst) return takeFromStart(conn, r, limit, minLoopTime);
  const heads = (await conn.query<HeadRow>(r.sql.heads(limit), [minLoopTime])).rows;
  if (heads.length === 0) return [];
  const claim = r.sql.claimFrom(limit, fromHeads(r.codec, heads), minLoopTime);
  const { rows } = await conn.query<{ v: unknown }>(claim.sql, claim.params);
  // Every row from those starts was held by other getters (which read the same starts): read the
  // whole ranges, as without the plain read, so that [] still means that no free id is due.
  if (rows.length === 0) return takeFromStart(conn, r, limit, minLoopTime);
  return rows.map((row) => r.codec.decode(row.v));
}

/** Where each step's locking read starts, from the rows of `LoopSql.heads` (in `get`'s order). */
export function fromHeads(codec: IdCodec, heads: readonly HeadRow[]): ClaimFrom {
  const expiredRow = heads.find((h) => toNumber(h.p) === 1);
  const idle = heads.filter((h) => toNumber(h.p) === 2).map((h) => ({ lastUpdated: toNumberOrNull(h.k2), v: h.v }));
  const first = idle[0];
  return {
    ...(expiredRow === undefined ? {} : { expired: toNumber(expiredRow.k1) }),
    ...(first === undefined
      ? {}
      : {
          idle: {
            lastUpdated: first.lastUpdated,
            id: codec.encode(codec.decode(first.v), 'id').param,
            sameTime: idle.filter((x) => x.lastUpdated === first.lastUpdated).length,
          },
        }),
  };
}
