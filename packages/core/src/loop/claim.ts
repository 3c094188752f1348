import type { SqlConnection } from '../port.js';
import { toNumber } from '../validate.js';
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

const secondsOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : toNumber(v));

/**
 * How `get` finds its ids where `dialect.plainReadFirst` holds (MariaDB), outside the
 * application's transaction: a plain read of where each step's due ids start, then a locking
 * read (`SKIP LOCKED`) from there.
 *
 * Starting from the first due row, not from the start of the index range, spares the locking
 * read the entries of ids taken or done since InnoDB last purged: a plain read passes them
 * cheaply, MariaDB's locking reads look each one up in the table (on MariaDB 10.11 a `get(100)`
 * walked thousands of them: 8 ms instead of 1). Ids that become due before the start while a `get`
 * runs are left to a later `get`.
 *
 * Takes up to `limit` due ids in `conn`'s transaction (locks them; the caller then leases them).
 * MUST only take rows its locking read matched: the plain read decides where to look, never
 * what is taken. MUST NOT come back empty while a due id is free: when every row from the starts
 * is held, it reads the whole ranges. A `get` that loses a race for the same ids sees fewer ids,
 * never an id another transaction holds.
 */
export async function takeDue(conn: SqlConnection, r: { codec: IdCodec; sql: LoopSql }, limit: number, minLoopTime: number): Promise<LoopId[]> {
  const heads = (await conn.query<HeadRow>(r.sql.heads(limit), [minLoopTime])).rows;
  if (heads.length === 0) return [];
  const claim = r.sql.claimFrom(limit, fromHeads(r.codec, heads), minLoopTime);
  let { rows } = await conn.query<{ v: unknown }>(claim.sql, claim.params);
  // Every row from those starts was held by other getters (which read the same starts): read the
  // whole ranges, as without the plain read, so that [] still means that no free id is due.
  if (rows.length === 0) ({ rows } = await conn.query<{ v: unknown }>(r.sql.claim(limit), [minLoopTime]));
  return rows.map((row) => r.codec.decode(row.v));
}

/** Where each step's locking read starts, from the rows of `LoopSql.heads` (in `get`'s order). */
export function fromHeads(codec: IdCodec, heads: readonly HeadRow[]): ClaimFrom {
  const expiredRow = heads.find((h) => toNumber(h.p) === 1);
  const idle = heads.filter((h) => toNumber(h.p) === 2).map((h) => ({ lastUpdated: secondsOrNull(h.k2), v: h.v }));
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
