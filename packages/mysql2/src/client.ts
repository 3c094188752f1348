import { describeMysql2Error, driverClient, toSqlResult, type DriverPool, type SqlClient, type SqlConnection, type SqlValue } from '@taskrow/core';

/** The parts of mysql2's promise Connection / PoolConnection taskrow uses. */
export interface Mysql2Connection {
  query(sql: string, values?: unknown): Promise<[unknown, unknown]>;
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** The parts of mysql2's promise Pool taskrow uses. */
export interface Mysql2Pool {
  query(sql: string, values?: unknown): Promise<[unknown, unknown]>;
  getConnection(): Promise<Mysql2Connection & { release(): void; destroy?(): void }>;
}

/** A mysql2 promise client: a Pool, a PoolConnection or a Connection. */
export type Mysql2Client = Mysql2Pool | Mysql2Connection;

type Mysql2PoolConnection = Awaited<ReturnType<Mysql2Pool['getConnection']>>;

function connectionOf(target: Pick<Mysql2Client, 'query'>): SqlConnection {
  return {
    query: async <Row>(sql: string, params: readonly SqlValue[] = []) => toSqlResult<Row>((await target.query(sql, params))[0]),
  };
}

/** True when the driver object says it was ended (pool.end() / connection.end()). */
function isClosed(target: object): boolean {
  const t = target as { pool?: { _closed?: boolean }; _closed?: boolean; connection?: { _closing?: boolean; _fatalError?: unknown } };
  return Boolean(t.pool?._closed || t._closed || t.connection?._closing);
}

function isPool(target: Mysql2Client): target is Mysql2Pool {
  return typeof (target as Partial<Mysql2Pool>).getConnection === 'function';
}

/** A Pool lends its connections; a broken one is destroyed (when the driver can) instead of released. */
function poolOf(pool: Mysql2Pool): DriverPool<Mysql2PoolConnection> {
  return {
    ...connectionOf(pool),
    acquire: () => pool.getConnection(),
    release: (conn, broken) => (broken && conn.destroy ? conn.destroy() : conn.release()),
  };
}

/**
 * The `SqlClient` over a mysql2 promise client. A Pool lends one connection per transaction and
 * takes it back on every path (destroying it when the connection failed); a single connection is
 * used in turns. `joined` wraps the application's connection inside its open transaction.
 */
export function mysql2Client(target: Mysql2Client, joined = false): SqlClient {
  return driverClient<Mysql2Connection, Mysql2PoolConnection>({
    adapter: 'mysql2',
    describeError: (err) => describeMysql2Error(err, () => isClosed(target)),
    connectionOf,
    target: joined ? { joined: connectionOf(target) } : isPool(target) ? { pool: poolOf(target) } : { connection: target },
  });
}
