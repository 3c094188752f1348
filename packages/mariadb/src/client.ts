import { driverClient, toSqlResult, waitsOf, type DriverPool, type EnqueueEmitter, type SqlClient, type SqlConnection, type SqlValue } from '@taskrow/core';
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
export interface MariadbPool extends EnqueueEmitter {
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

function connectionOf(target: { query: MariadbPool['query'] }): SqlConnection {
  return {
    query: async <Row>(sql: string, params: readonly SqlValue[] = []) => toSqlResult<Row>(await target.query({ sql, ...QUERY_OPTIONS }, params)),
  };
}

/** True for a `mariadb` Pool (it lends connections), false for a single connection. */
export function isMariadbPool(target: MariadbClient): target is MariadbPool {
  return typeof (target as Partial<MariadbPool>).getConnection === 'function';
}

/**
 * A Pool lends its connections. One that broke (a lost error, or no longer valid) is destroyed; the
 * others are released, and destroyed should the release fail. Its `enqueue` event (a caller waits
 * for a connection) tells a worker's kept connection to go back.
 */
function poolOf(pool: MariadbPool): DriverPool<MariadbPoolConnection> {
  return {
    acquire: () => pool.getConnection(),
    unusable: (conn) => !conn.isValid(),
    release: (conn, broken) => (broken ? conn.destroy() : conn.release().catch(() => conn.destroy())),
    ...waitsOf(pool),
  };
}

/**
 * The `SqlClient` over a `mariadb` promise client. A Pool lends one connection per transaction and
 * takes it back on every path (destroying it when it broke); a single connection is used in turns.
 * `joined` wraps the application's connection inside its open transaction.
 */
export function mariadbClient(target: MariadbClient, joined = false): SqlClient {
  const pool = isMariadbPool(target) ? target : undefined;
  const closed = (): boolean => (pool ? pool.closed : !(target as MariadbConnection).isValid());
  return driverClient<MariadbConnection, MariadbPoolConnection>({
    adapter: 'mariadb',
    describeError: (err) => describeMariadbError(err, closed, pool === undefined),
    connectionOf,
    target: joined ? { joined: connectionOf(target) } : isMariadbPool(target) ? { pool: poolOf(target) } : { connection: target },
  });
}
