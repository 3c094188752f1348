import type { SqlValue } from '../port.js';
import type { IdCodec } from './ids.js';
import type { LoopTable } from './tables.js';

/**
 * Where `get`'s locking read starts in each of its two steps: the first row a plain read found
 * there (`heads`). Undefined: that step had no row, and the locking read leaves it out.
 */
export interface ClaimFrom {
  /** Step 1 (expired locks, bumps): its first row's `lock_until`. */
  readonly expired?: SqlValue;
  /**
   * Step 2 (unlocked ids): its first row's `last_updated` (null: never updated) and id (bound as
   * the id column's placeholder takes it), and how many of the step's first `limit` rows share
   * that `last_updated`.
   */
  readonly idle?: { readonly lastUpdated: SqlValue; readonly id: SqlValue; readonly sameTime: number };
}

/** A statement and its parameters. */
export interface Bound {
  readonly sql: string;
  readonly params: SqlValue[];
}

/**
 * The statements of a loop, over one table and id type. Every time is the database clock's
 * `UNIX_TIMESTAMP()` (constant within a statement); every id is a bound parameter; counts inlined
 * in `LIMIT` are integers checked by the caller.
 */
export interface LoopSql {
  /** `INSERT IGNORE` of `n` ids: only duplicates are skipped, every value was validated first. */
  add(n: number, updated: boolean): string;
  remove(n: number): string;
  /** Adds missing ids, taking an exclusive lock on existing ones at once (no shared-then-exclusive upgrade). */
  ensure(n: number): string;
  /** `did` with auto-add, when some ids are missing: adds them, and marks every id of the part. */
  didUpsert(n: number): string;
  did(n: number): string;
  /** `unlock` with auto-add, when some ids are missing: adds them, and unlocks every id of the part. */
  unlockUpsert(n: number): string;
  unlock(n: number): string;
  /** Params: lockFor, lockFor, ...ids. Matches only the rows whose `lock_until` it lowers. */
  bump(n: number): string;
  /**
   * `get`'s candidates, both of the original's steps in one locking read, each in index order and
   * skipping rows other transactions hold. Params: minLoopTime. Rows: v (the id, as `decode`
   * and the placeholder take it), p (step), k1, k2, k3 (order keys).
   */
  claim(limit: number): string;
  /**
   * Plain (non-locking) read of the first row of step 1 and the first `limit` rows of step 2 of
   * `get`. Params: minLoopTime. Rows: p (step), k1 (step 1's `lock_until`), k2, k3 and v (step 2's
   * `last_updated`, id as stored, id as `decode` takes it), in `get`'s order.
   */
  heads(limit: number): string;
  /**
   * `claim` starting each step at the row `heads` found first: a locking read that walks index
   * entries from there, not from the start of the step's range, where entries of rows taken
   * or done since InnoDB last purged still lie (a locking read looks each up in the table). Each
   * branch reads one contiguous range of the index, so the server cannot widen it. Rows: as `claim`.
   */
  claimFrom(limit: number, from: ClaimFrom, minLoopTime: number): Bound;
  /** Params: lockFor, ...ids. */
  lock(n: number): string;
  /** Rows: v, since_updated, locked_for. */
  check(n: number): string;
  /** One row, one statement (one snapshot): index ends, and ranges over the locked and bumped rows only. */
  stats(): string;
}

/** The statements of loop table `t` with ids of `codec`'s type. */
export function loopSql(t: LoopTable, codec: IdCodec): LoopSql {
  const tbl = t.quoted;
  const list = (n: number): string => Array(n).fill(codec.placeholder).join(', ');
  const rows = (n: number, inner: string): string => Array(n).fill(`(${inner})`).join(', ');
  const v = codec.select('`id`');
  return {
    add: (n, updated) =>
      `INSERT IGNORE INTO ${tbl} (\`id\`, \`last_updated\`) VALUES ${rows(n, `${codec.placeholder}, ${updated ? 'UNIX_TIMESTAMP()' : 'NULL'}`)}`,
    remove: (n) => `DELETE FROM ${tbl} WHERE \`id\` IN (${list(n)})`,
    ensure: (n) => `INSERT INTO ${tbl} (\`id\`) VALUES ${rows(n, codec.placeholder)} ON DUPLICATE KEY UPDATE \`id\` = \`id\``,
    didUpsert: (n) =>
      `INSERT INTO ${tbl} (\`id\`, \`last_updated\`, \`lock_until\`) VALUES ${rows(n, `${codec.placeholder}, UNIX_TIMESTAMP(), NULL`)}
       ON DUPLICATE KEY UPDATE \`last_updated\` = UNIX_TIMESTAMP(), \`lock_until\` = NULL`,
    did: (n) => `UPDATE ${tbl} SET \`last_updated\` = UNIX_TIMESTAMP(), \`lock_until\` = NULL WHERE \`id\` IN (${list(n)})`,
    unlockUpsert: (n) => `INSERT INTO ${tbl} (\`id\`) VALUES ${rows(n, codec.placeholder)} ON DUPLICATE KEY UPDATE \`lock_until\` = NULL`,
    unlock: (n) => `UPDATE ${tbl} SET \`lock_until\` = NULL WHERE \`id\` IN (${list(n)})`,
    bump: (n) =>
      `UPDATE ${tbl} SET \`lock_until\` = UNIX_TIMESTAMP() + ?
       WHERE (\`lock_until\` IS NULL OR \`lock_until\` > UNIX_TIMESTAMP() + ?) AND \`id\` IN (${list(n)})`,
    claim: (limit) =>
      `(SELECT ${v} AS v, 1 AS p, \`lock_until\` AS k1, \`last_updated\` AS k2, \`id\` AS k3 FROM ${tbl}
         WHERE \`lock_until\` <= UNIX_TIMESTAMP()
         ORDER BY \`lock_until\`, \`last_updated\`, \`id\` LIMIT ${limit} FOR UPDATE SKIP LOCKED)
       UNION ALL
       (SELECT ${v}, 2, NULL, \`last_updated\`, \`id\` FROM ${tbl}
         WHERE \`lock_until\` IS NULL AND (\`last_updated\` IS NULL OR \`last_updated\` <= UNIX_TIMESTAMP() - ?)
         ORDER BY \`last_updated\`, \`id\` LIMIT ${limit} FOR UPDATE SKIP LOCKED)
       ORDER BY p, k1, k2, k3 LIMIT ${limit}`,
    heads: (limit) =>
      `(SELECT 1 AS p, \`lock_until\` AS k1, NULL AS k2, NULL AS k3, NULL AS v FROM ${tbl}
         WHERE \`lock_until\` <= UNIX_TIMESTAMP() ORDER BY \`lock_until\` LIMIT 1)
       UNION ALL
       (SELECT 2, NULL, \`last_updated\`, \`id\`, ${v} FROM ${tbl}
         WHERE \`lock_until\` IS NULL AND (\`last_updated\` IS NULL OR \`last_updated\` <= UNIX_TIMESTAMP() - ?)
         ORDER BY \`last_updated\`, \`id\` LIMIT ${limit})
       ORDER BY p, k2, k3`,
    claimFrom: (limit, from, minLoopTime) => claimFrom(tbl, v, codec.placeholder, limit, from, minLoopTime),
    lock: (n) => `UPDATE ${tbl} SET \`lock_until\` = UNIX_TIMESTAMP() + ? WHERE \`id\` IN (${list(n)})`,
    check: (n) =>
      `SELECT ${v} AS v, UNIX_TIMESTAMP() - \`last_updated\` AS since_updated, \`lock_until\` - UNIX_TIMESTAMP() AS locked_for
       FROM ${tbl} WHERE \`id\` IN (${list(n)})`,
    stats: () =>
      // Update times over every id, as doloop: the ends of the unlocked range of the index, and
      // the locked and bumped rows, which the lock and bump counts read anyway.
      `SELECT i.min_id, i.max_id,
              UNIX_TIMESTAMP() - GREATEST(COALESCE(u.hi, l.hi, b.hi), COALESCE(l.hi, u.hi, b.hi), COALESCE(b.hi, u.hi, l.hi)) AS min_update_time,
              UNIX_TIMESTAMP() - LEAST(COALESCE(u.lo, l.lo, b.lo), COALESCE(l.lo, u.lo, b.lo), COALESCE(b.lo, u.lo, l.lo)) AS max_update_time,
              l.n AS locked, l.min_lock_time, l.max_lock_time, b.n AS bumped, b.min_bump_time, b.max_bump_time
       FROM (SELECT ${codec.select('MIN(`id`)')} AS min_id, ${codec.select('MAX(`id`)')} AS max_id FROM ${tbl}) i
       CROSS JOIN (SELECT MAX(\`last_updated\`) AS hi, MIN(\`last_updated\`) AS lo FROM ${tbl} WHERE \`lock_until\` IS NULL) u
       CROSS JOIN (SELECT COUNT(*) AS n, MIN(\`lock_until\`) - UNIX_TIMESTAMP() AS min_lock_time, MAX(\`lock_until\`) - UNIX_TIMESTAMP() AS max_lock_time,
                          MAX(\`last_updated\`) AS hi, MIN(\`last_updated\`) AS lo
                   FROM ${tbl} WHERE \`lock_until\` > UNIX_TIMESTAMP()) l
       CROSS JOIN (SELECT COUNT(*) AS n, UNIX_TIMESTAMP() - MAX(\`lock_until\`) AS min_bump_time, UNIX_TIMESTAMP() - MIN(\`lock_until\`) AS max_bump_time,
                          MAX(\`last_updated\`) AS hi, MIN(\`last_updated\`) AS lo
                   FROM ${tbl} WHERE \`lock_until\` <= UNIX_TIMESTAMP()) b`,
  };
}

/** `LoopSql.claimFrom` over quoted table `tbl`, the id read as `v` and bound as `ph`. */
function claimFrom(tbl: string, v: string, ph: string, limit: number, from: ClaimFrom, minLoopTime: number): Bound {
  const parts: string[] = [];
  const params: SqlValue[] = [];
  if (from.expired !== undefined) {
    parts.push(`SELECT ${v} AS v, 1 AS p, \`lock_until\` AS k1, \`last_updated\` AS k2, \`id\` AS k3 FROM ${tbl}
         WHERE \`lock_until\` <= UNIX_TIMESTAMP() AND \`lock_until\` >= ?
         ORDER BY \`lock_until\`, \`last_updated\`, \`id\` LIMIT ${limit} FOR UPDATE SKIP LOCKED`);
    params.push(from.expired);
  }
  if (from.idle !== undefined) {
    const { lastUpdated, id, sameTime } = from.idle;
    const cols = `SELECT ${v} AS v, 2 AS p, NULL AS k1, \`last_updated\` AS k2, \`id\` AS k3 FROM ${tbl}`;
    // The first row's time from its id on, then (when the first rows run past that time) the later times.
    const at = lastUpdated === null ? '`last_updated` IS NULL' : '`last_updated` = ?';
    // FORCE INDEX: else the server reads (NULL, time) by `ref` from the start of that time's
    // entries, leaving the id bound to a filter (MariaDB 10.11 and 11.8 do).
    parts.push(`${cols} FORCE INDEX (\`lock_until\`)
         WHERE \`lock_until\` IS NULL AND ${at} AND \`id\` >= ${ph} AND (\`last_updated\` IS NULL OR \`last_updated\` <= UNIX_TIMESTAMP() - ?)
         ORDER BY \`id\` LIMIT ${limit} FOR UPDATE SKIP LOCKED`);
    params.push(...(lastUpdated === null ? [] : [lastUpdated]), id, minLoopTime);
    if (sameTime < limit) {
      const after = lastUpdated === null ? '`last_updated` IS NOT NULL' : '`last_updated` > ?';
      parts.push(`${cols}
         WHERE \`lock_until\` IS NULL AND ${after} AND \`last_updated\` <= UNIX_TIMESTAMP() - ?
         ORDER BY \`last_updated\`, \`id\` LIMIT ${limit - sameTime} FOR UPDATE SKIP LOCKED`);
      params.push(...(lastUpdated === null ? [] : [lastUpdated]), minLoopTime);
    }
  }
  const sql = parts.length === 1 ? parts[0]! : `(${parts.join(')\n       UNION ALL\n       (')})\n       ORDER BY p, k1, k2, k3 LIMIT ${limit}`;
  return { sql, params };
}
