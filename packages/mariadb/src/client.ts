import { serialClient, type IsolationLevel, type SqlClient, type SqlConnection, type SqlResult, type SqlValue } from '@taskrow/core';
import { describeMariadbError } from './errors.js';

/** A statement with the per-query options taskrow sets (see `QUERY_OPTIONS`). */
export interface MariadbQuery {
  readonly sql: string;
  readonly [option: string]: unknown;
}

/** The parts of a `mariadb` promise Connection / PoolConnection taskrow uses. */
export interface MariadbConnection {
  query(sql: string | MariadbQuery, values?: unknown): Promise<unknown>;
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /** False once the connection was ended or broke. */
  isValid(): boolean;
}

/** A connection lent by a `mariadb` Pool. */
export interface MariadbPoolConnection extends MariadbConnection {
  release(): Promise<void>;
  destroy(): void;
}

/** The parts of a `mariadb` promise Pool taskrow uses. */
export interface MariadbPool {
  query(sql: string | MariadbQuery, values?: unknown): Promise<unknown>;
  getConnection(): Promise<MariadbPoolConnection>;
  /** True once `pool.end()` was called. */
  readonly closed: boolean;
}

/** A `mariadb` promise client: a Pool, a PoolConnection or a Connection. */
export type MariadbClient = MariadbPool | MariadbConnection;

/**
 * Options set on every statement, whatever the application configured on its pool, so that rows
 * reach the engine in the shape the other adapters give: BIGINT and insert ids as numbers (as
 * mysql2 returns them), rows as objects, `?` placeholders only, real Dates.
 */
const QUERY_OPTIONS = {
  bigIntAsNumber: true,
  insertIdAsNumber: true,
  checkDuplicate: false,
  rowsAsArray: false,
  namedPlaceholders: false,
  dateStrings: false,
  metaAsArray: false,
} as const;

function toResult<Row>(raw: unknown): SqlResult<Row> {
  if (Array.isArray(raw)) return { rows: raw as Row[], affectedRows: 0, insertId: 0 };
  const h = (raw ?? {}) as { affectedRows?: unknown; insertId?: unknown };
  return { rows: [], affectedRows: Number(h.affectedRows ?? 0), insertId: Number(h.insertId ?? 0) };
}

function connectionOf(target: { query: MariadbPool['query'] }): SqlConnection {
  return {
    query: async <Row>(sql: string, params: readonly SqlValue[] = []) => toResult<Row>(await target.query({ sql, ...QUERY_OPTIONS }, params)),
  };
}

/** True for a `mariadb` Pool (it lends connections), false for a single connection. */
export function isMariadbPool(target: MariadbClient): target is MariadbPool {
  return typeof (target as Partial<MariadbPool>).getConnection === 'function';
}

async function inTransaction<T>(conn: MariadbConnection, fn: (c: SqlConnection) => Promise<T>, isolation?: IsolationLevel): Promise<T> {
  if (isolation) await conn.query(`SET TRANSACTION ISOLATION LEVEL ${isolation}`);
  await conn.beginTransaction();
  try {
    const result = await fn(connectionOf(conn));
    await conn.commit();
    return result;
  } catch (err) {
    await conn.rollback().catch(() => undefined);
    throw err;
  }
}

/**
 * The `SqlClient` over a `mariadb` promise client. A Pool lends one connection per transaction and
 * takes it back on every path (destroying it when it broke); a single connection is used in turns.
 * `joined` wraps the application's connection inside its open transaction.
 */
export function mariadbClient(target: MariadbClient, joined = false): SqlClient {
  const pool = isMariadbPool(target) ? target : undefined;
  const closed = (): boolean => (pool ? pool.closed : !(target as MariadbConnection).isValid());
  const describeError = (err: unknown) => describeMariadbError(err, closed, pool === undefined);
  const base = connectionOf(target);
  if (joined) {
    return { adapter: 'mariadb', joined: true, describeError, query: base.query, transaction: (fn) => fn(base) };
  }
  if (pool) {
    return {
      adapter: 'mariadb',
      joined: false,
      describeError,
      query: base.query,
      async transaction(fn, options) {
        const conn = await pool.getConnection();
        let broken = false;
        try {
          return await inTransaction(conn, fn, options?.isolation);
        } catch (err) {
          broken = describeError(err).lost === true || !conn.isValid();
          throw err;
        } finally {
          if (broken) conn.destroy();
          else await conn.release().catch(() => conn.destroy());
        }
      },
    };
  }
  const conn = target as MariadbConnection;
  return serialClient({
    adapter: 'mariadb',
    joined: false,
    describeError,
    query: base.query,
    transaction: (fn, options) => inTransaction(conn, fn, options?.isolation),
  });
}
