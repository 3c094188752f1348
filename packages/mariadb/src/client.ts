import {
  driverClient,
  killingAbandoned,
  toSqlResult,
  waitsOf,
  type DriverPool,
  type EnqueueEmitter,
  type SqlClient,
  type SqlConnection,
  type SqlValue,
} from '@taskrow/core';
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
  /** The server's id of the connection's session. */
  readonly threadId?: number | null;
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

/** A socket that can be failed with an error. */
interface Destroyable {
  destroy(error?: Error): unknown;
}

/** The socket under a `mariadb` connection, as the driver (3.x) hands it out through `__tests`. */
interface SocketOf {
  readonly __tests?: { getSocket?(): Destroyable | undefined };
}

/** The connection's socket while it has one; undefined once closed, or from a driver without `__tests`. */
function socketOf(conn: MariadbPoolConnection): Destroyable | undefined {
  try {
    return (conn as SocketOf).__tests?.getSocket?.();
  } catch {
    return undefined;
  }
}

/** The error a destroyed connection's statement in flight is failed with (a lost connection). */
function abandonedError(): Error {
  return Object.assign(new Error('Connection destroyed by taskrow: its statement was abandoned or the connection broke'), {
    code: 'ER_CMD_NOT_EXECUTED_DESTROYED',
  });
}

/**
 * Destroys a broken pooled connection. MUST NOT leave a rejection unhandled: the driver's own
 * `destroy()`, while a statement is in flight, opens a second connection to `KILL` the first one's
 * thread and drops the KILL's failure (the thread already gone, that connection reset) as an
 * unhandled rejection, which ends a Node process. So the socket is failed first, the way a reset
 * would fail it: the driver fails the statement in flight and closes the connection itself (the
 * server rolls its session back when it hears the close, as it does for mysql2), then `destroy()`
 * only gives the slot back to the pool. Without a socket to fail, `destroy()` alone.
 */
async function destroyBroken(conn: MariadbPoolConnection): Promise<void> {
  const socket = socketOf(conn);
  if (socket !== undefined) {
    socket.destroy(abandonedError());
    // The socket's error reaches the driver on the next tick; the connection is closed after it.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  try {
    conn.destroy();
  } catch {
    // Already closed: nothing is left to give back.
  }
}

/**
 * A Pool lends its connections. One that broke (a lost error, or no longer valid) is destroyed
 * (`destroyBroken`); the others are released, and destroyed should the release fail. Its `enqueue`
 * event (a caller waits for a connection) tells a worker's kept connection to go back.
 */
function poolOf(pool: MariadbPool): DriverPool<MariadbPoolConnection> {
  return {
    acquire: () => pool.getConnection(),
    unusable: (conn) => !conn.isValid(),
    release: (conn, broken) => (broken ? destroyBroken(conn) : conn.release().catch(() => destroyBroken(conn))),
    ...waitsOf(pool),
  };
}

/**
 * The `SqlClient` over a `mariadb` promise client. A Pool lends one connection per transaction and
 * takes it back on every path (destroying it when it broke, and killing its server session when a
 * statement was still in flight: `killingAbandoned`); a single connection is used in turns.
 * `joined` wraps the application's connection inside its open transaction.
 */
export function mariadbClient(target: MariadbClient, joined = false): SqlClient {
  const pool = isMariadbPool(target) ? target : undefined;
  const closed = (): boolean => (pool ? pool.closed : !(target as MariadbConnection).isValid());
  const describeError = (err: unknown) => describeMariadbError(err, closed, pool === undefined);
  if (joined || pool === undefined) {
    return driverClient<MariadbConnection>({
      adapter: 'mariadb',
      describeError,
      connectionOf,
      target: joined ? { joined: connectionOf(target) } : { connection: target as MariadbConnection },
    });
  }
  const killing = killingAbandoned(poolOf(pool), { threadOf: (conn: MariadbPoolConnection) => conn.threadId ?? undefined, connectionOf, describeError });
  return driverClient<MariadbConnection, MariadbPoolConnection>({
    adapter: 'mariadb',
    describeError,
    connectionOf: (conn) => killing.watch(conn, connectionOf(conn)),
    target: { pool: killing.pool },
  });
}
