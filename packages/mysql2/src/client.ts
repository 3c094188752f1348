import {
  describeMysql2Error,
  driverClient,
  killingAbandoned,
  toSqlResult,
  waitsOf,
  type DriverPool,
  type EnqueueEmitter,
  type SqlClient,
  type SqlConnection,
  type SqlResult,
  type SqlValue,
} from '@taskrow/core';

/** The parts of mysql2's promise Connection / PoolConnection taskrow uses. */
export interface Mysql2Connection {
  query(sql: string, values?: unknown): Promise<[unknown, unknown]>;
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** The parts of mysql2's promise Pool taskrow uses. */
export interface Mysql2Pool extends EnqueueEmitter {
  query(sql: string, values?: unknown): Promise<[unknown, unknown]>;
  getConnection(): Promise<Mysql2Connection & { release(): void; destroy?(): void }>;
}

/** A mysql2 promise client: a Pool, a PoolConnection or a Connection. */
export type Mysql2Client = Mysql2Pool | Mysql2Connection;

type Mysql2PoolConnection = Awaited<ReturnType<Mysql2Pool['getConnection']>>;

/** The callback-API query of mysql2's core Connection, PoolConnection or Pool. */
interface CoreQueryable {
  query(sql: string, values: readonly SqlValue[], callback: (err: Error | null, rows?: unknown) => void): unknown;
}

/** The core object under a mysql2 promise wrapper (`.connection` of a (Pool)Connection, `.pool` of a Pool), when there is one. */
function coreOf(target: object): CoreQueryable | undefined {
  const t = target as { connection?: Partial<CoreQueryable>; pool?: Partial<CoreQueryable> };
  const core = t.connection ?? t.pool;
  return typeof core?.query === 'function' ? (core as CoreQueryable) : undefined;
}

/**
 * Statements go through the core object's callback API where the promise wrapper has one: the
 * wrapper captures a stack trace for every statement (its `trace` option, on by default), which
 * costs more CPU than anything else on the client's side of a claim. taskrow's errors carry their
 * own stack.
 */
function connectionOf(target: Pick<Mysql2Client, 'query'>): SqlConnection {
  const core = coreOf(target);
  if (core) {
    return {
      query: <Row>(sql: string, params: readonly SqlValue[] = []) =>
        new Promise<SqlResult<Row>>((resolve, reject) => void core.query(sql, params, (err, rows) => (err ? reject(err) : resolve(toSqlResult<Row>(rows))))),
    };
  }
  return {
    query: async <Row>(sql: string, params: readonly SqlValue[] = []) => toSqlResult<Row>((await target.query(sql, params))[0]),
  };
}

/** True when the driver object says it was ended (pool.end() / connection.end()). */
function isClosed(target: object): boolean {
  const t = target as { pool?: { _closed?: boolean }; _closed?: boolean; connection?: { _closing?: boolean; _fatalError?: unknown } };
  return Boolean(t.pool?._closed || t._closed || t.connection?._closing);
}

/** The transaction calls of mysql2's core Connection or PoolConnection. */
interface CoreTransactions {
  beginTransaction(callback: (err: Error | null) => void): unknown;
  commit(callback: (err: Error | null) => void): unknown;
  rollback(callback: (err: Error | null) => void): unknown;
}

const settle = (call: (callback: (err: Error | null) => void) => unknown): Promise<void> =>
  new Promise((resolve, reject) => void call((err) => (err ? reject(err) : resolve())));

/** `conn` with BEGIN, COMMIT and ROLLBACK sent through its core connection's callbacks as well (see `connectionOf`). */
function direct<T extends Mysql2Connection>(conn: T): T {
  const core = (conn as { connection?: Partial<CoreTransactions> }).connection;
  if (typeof core?.beginTransaction !== 'function' || typeof core.commit !== 'function' || typeof core.rollback !== 'function') return conn;
  const c = core as CoreTransactions;
  return Object.assign(Object.create(conn) as T, {
    beginTransaction: () => settle((cb) => c.beginTransaction(cb)),
    commit: () => settle((cb) => c.commit(cb)),
    rollback: () => settle((cb) => c.rollback(cb)),
  });
}

function isPool(target: Mysql2Client): target is Mysql2Pool {
  return typeof (target as Partial<Mysql2Pool>).getConnection === 'function';
}

/**
 * A Pool lends its connections; a broken one is destroyed (when the driver can) instead of released.
 * Its `enqueue` event (a caller waits for a connection) tells a worker's kept connection to go back.
 */
function poolOf(pool: Mysql2Pool): DriverPool<Mysql2PoolConnection> {
  return {
    acquire: async () => direct(await pool.getConnection()),
    release: (conn, broken) => (broken && conn.destroy ? conn.destroy() : conn.release()),
    ...waitsOf(pool),
  };
}

/** The server's id of a pooled connection's session, from its handshake. */
const threadOf = (conn: Mysql2PoolConnection): number | undefined => (conn as { connection?: { threadId?: number } }).connection?.threadId;

/**
 * The `SqlClient` over a mysql2 promise client. A Pool lends one connection per transaction and
 * takes it back on every path (destroying it when the connection failed, and killing its server
 * session when a statement was still in flight: `killingAbandoned`); a single connection is used
 * in turns. `joined` wraps the application's connection inside its open transaction.
 */
export function mysql2Client(target: Mysql2Client, joined = false): SqlClient {
  const describeError = (err: unknown) => describeMysql2Error(err, () => isClosed(target));
  if (joined) return driverClient<Mysql2Connection>({ adapter: 'mysql2', describeError, connectionOf, target: { joined: connectionOf(target) } });
  if (!isPool(target)) return driverClient<Mysql2Connection>({ adapter: 'mysql2', describeError, connectionOf, target: { connection: direct(target) } });
  const killing = killingAbandoned(poolOf(target), { threadOf, connectionOf, describeError });
  return driverClient<Mysql2Connection, Mysql2PoolConnection>({
    adapter: 'mysql2',
    describeError,
    connectionOf: (conn) => killing.watch(conn, connectionOf(conn)),
    target: { pool: killing.pool },
  });
}
