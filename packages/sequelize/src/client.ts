import { driverClient, killingAbandoned, toSqlResult, type DriverPool, type SqlClient, type SqlConnection, type SqlValue } from '@taskrow/core';
import { describeSequelizeError, isPlainError } from './errors.js';

/** A mysql2 connection (callback API), as Sequelize's mysql dialect lends it. */
export interface Mysql2CallbackConnection {
  query(sql: string, values: unknown, cb: (err: unknown, result: unknown) => void): unknown;
  /** mysql2's promise wrapper over the same connection. */
  promise(): { beginTransaction(): Promise<void>; commit(): Promise<void>; rollback(): Promise<void> };
  /** Closes the socket at once (Sequelize's own disconnect waits for the server to answer a QUIT). */
  destroy(): void;
  /** The server's id of the connection's session, from its handshake. */
  readonly threadId?: number | null;
}

/** The parts of Sequelize's `connectionManager` taskrow uses (public API of Sequelize 6). */
export interface SequelizeConnectionManager {
  getConnection(options: { type: 'read' | 'write'; uuid?: string }): Promise<unknown>;
  releaseConnection(conn: unknown): void;
  destroyConnection(conn: unknown): Promise<void>;
}

/** A Sequelize instance (mysql dialect), typed structurally: its connection manager lends mysql2 connections. */
export interface SequelizeInstance {
  readonly connectionManager: SequelizeConnectionManager;
  getDialect(): string;
}

/** A connection with mysql2's transaction calls, as core's `driverClient` drives it. */
interface LentConnection {
  readonly conn: Mysql2CallbackConnection;
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** One statement on a mysql2 callback connection: `?` values bound by mysql2 (its `query()`, the text protocol). */
export function connectionOf(conn: Mysql2CallbackConnection): SqlConnection {
  return {
    query: <Row>(sql: string, params: readonly SqlValue[] = []) =>
      new Promise<ReturnType<typeof toSqlResult<Row>>>((resolve, reject) => {
        conn.query(sql, params, (err, result) => (err ? reject(err) : resolve(toSqlResult<Row>(result))));
      }),
  };
}

function lent(conn: Mysql2CallbackConnection): LentConnection {
  const p = conn.promise();
  return { conn, beginTransaction: () => p.beginTransaction(), commit: () => p.commit(), rollback: () => p.rollback() };
}

/**
 * Sequelize's pool as core's `DriverPool`: `getConnection({ type: 'write' })` lends a connection,
 * `releaseConnection()` takes it back, `destroyConnection()` drops a broken one, its socket closed
 * first: Sequelize's own disconnect sends QUIT and waits for the server, which on a silent socket
 * never answers, so the server would keep the connection's transaction and its locks. An acquire
 * that fails with a plain error (Sequelize closed) is recorded in `closedErrors`.
 */
function poolOf(db: SequelizeInstance, closedErrors: WeakSet<object>): DriverPool<LentConnection> {
  const cm = db.connectionManager;
  const acquire = async (): Promise<LentConnection> => {
    try {
      return lent((await cm.getConnection({ type: 'write' })) as Mysql2CallbackConnection);
    } catch (err) {
      if (isPlainError(err)) closedErrors.add(err as object);
      throw err;
    }
  };
  const release = (c: LentConnection, broken: boolean): void | Promise<void> => {
    if (!broken) return cm.releaseConnection(c.conn);
    c.conn.destroy();
    return cm.destroyConnection(c.conn).catch(() => undefined);
  };
  return { acquire, release };
}

/**
 * The `SqlClient` over a Sequelize instance (mysql dialect): taskrow's statements and transactions
 * run on mysql2 connections lent by Sequelize's own pool (`sequelize.connectionManager`), with core's
 * BEGIN / COMMIT / ROLLBACK and isolation statement (`driverClient`), so the connection goes back
 * on every path and a broken one is destroyed (its server session killed when a statement was
 * still in flight: `killingAbandoned`).
 */
export function sequelizeClient(db: SequelizeInstance): SqlClient {
  const closedErrors = new WeakSet<object>();
  const describeError = (err: unknown) => describeSequelizeError(err, (e) => typeof e === 'object' && e !== null && closedErrors.has(e));
  const on = (c: LentConnection): SqlConnection => connectionOf(c.conn);
  const killing = killingAbandoned(poolOf(db, closedErrors), { threadOf: (c) => c.conn.threadId ?? undefined, connectionOf: on, describeError });
  return driverClient<LentConnection>({
    adapter: 'sequelize',
    describeError,
    connectionOf: (c) => killing.watch(c, on(c)),
    target: { pool: killing.pool },
  });
}

/**
 * The joined `SqlClient` over the connection of the application's Sequelize transaction (managed or
 * unmanaged): statements run on it, nothing begins or commits, and the application decides.
 */
export function sequelizeTransactionClient(conn: Mysql2CallbackConnection): SqlClient {
  return driverClient<LentConnection>({
    adapter: 'sequelize',
    describeError: (err) => describeSequelizeError(err, () => false),
    connectionOf: (c) => connectionOf(c.conn),
    target: { joined: connectionOf(conn) },
  });
}
