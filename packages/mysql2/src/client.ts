import { serialClient, type IsolationLevel, type SqlClient, type SqlConnection, type SqlResult, type SqlValue } from '@taskrow/core';
import { describeMysql2Error } from './errors.js';

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

function toResult<Row>(raw: unknown): SqlResult<Row> {
  if (Array.isArray(raw)) return { rows: raw as Row[], affectedRows: 0, insertId: 0 };
  const h = raw as { affectedRows?: number; insertId?: number };
  return { rows: [], affectedRows: h.affectedRows ?? 0, insertId: Number(h.insertId ?? 0) };
}

function connectionOf(conn: Mysql2Connection): SqlConnection {
  return {
    query: async <Row>(sql: string, params: readonly SqlValue[] = []) => toResult<Row>((await conn.query(sql, params))[0]),
  };
}

/** True when the driver object says it was ended (pool.end() / connection.end()). */
function isClosed(target: object): boolean {
  const t = target as { pool?: { _closed?: boolean }; _closed?: boolean; connection?: { _closing?: boolean; _fatalError?: unknown } };
  return Boolean(t.pool?._closed || t._closed || t.connection?._closing);
}

async function inTransaction<T>(conn: Mysql2Connection, fn: (c: SqlConnection) => Promise<T>, isolation?: IsolationLevel): Promise<T> {
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
 * The `SqlClient` over a mysql2 promise client. A Pool lends one connection per transaction and
 * takes it back on every path (destroying it when the connection failed); a single connection is
 * used in turns. `joined` wraps the application's connection inside its open transaction.
 */
export function mysql2Client(target: Mysql2Client, joined = false): SqlClient {
  const describeError = (err: unknown) => describeMysql2Error(err, () => isClosed(target));
  const base = connectionOf(target as Mysql2Connection);
  if (joined) {
    return { adapter: 'mysql2', joined: true, describeError, query: base.query, transaction: (fn) => fn(base) };
  }
  if ('getConnection' in target && typeof target.getConnection === 'function') {
    const pool = target;
    return {
      adapter: 'mysql2',
      joined: false,
      describeError,
      query: base.query,
      async transaction(fn, options) {
        const conn = await pool.getConnection();
        let broken = false;
        try {
          return await inTransaction(conn, fn, options?.isolation);
        } catch (err) {
          broken = describeError(err).lost === true;
          throw err;
        } finally {
          if (broken && conn.destroy) conn.destroy();
          else conn.release();
        }
      },
    };
  }
  const conn = target as Mysql2Connection;
  return serialClient({
    adapter: 'mysql2',
    joined: false,
    describeError,
    query: base.query,
    transaction: (fn, options) => inTransaction(conn, fn, options?.isolation),
  });
}
