import type { Knex } from 'knex';
import {
  killingAbandoned,
  lending,
  rollingBackInterrupted,
  toSqlResult,
  type IsolationLevel,
  type SqlClient,
  type SqlConnection,
  type SqlResult,
  type SqlValue,
  type Lender,
} from '@taskrow/core';
import { describeKnexError } from './errors.js';

/** Knex's names for the isolation levels the engine asks for. */
const ISOLATION: Record<IsolationLevel, Knex.IsolationLevels> = {
  'READ UNCOMMITTED': 'read uncommitted',
  'READ COMMITTED': 'read committed',
  'REPEATABLE READ': 'repeatable read',
};

/** What `knex.raw()` resolves to with the mysql2 client: mysql2's `[rows or header, fields]`. */
function toResult<Row>(response: unknown): SqlResult<Row> {
  return toSqlResult<Row>(Array.isArray(response) ? response[0] : undefined);
}

/** Statements through `raw()` of a Knex instance (any pooled connection) or of a transaction (its connection). */
function connectionOf(db: Knex | Knex.Transaction): SqlConnection {
  return {
    query: async <Row>(sql: string, params: readonly SqlValue[] = []) => toResult<Row>(await db.raw(sql, params as unknown as readonly Knex.RawBinding[])),
  };
}

/** The callback API of the mysql2 connection Knex lends a transaction. */
interface Mysql2CallbackConnection {
  query(sql: string, values: unknown, cb: (err: unknown, result: unknown) => void): void;
  /** Closes it: Knex's pool then finds it invalid and makes another in its place. */
  destroy(): void;
  /** The server's id of the connection's session, from its handshake. */
  readonly threadId?: number | null;
}

/** Statements on one mysql2 connection Knex lent, through its callback API. */
function callbackConnectionOf(conn: Mysql2CallbackConnection): SqlConnection {
  return {
    query: <Row>(sql: string, params: readonly SqlValue[] = []) =>
      new Promise<SqlResult<Row>>((resolve, reject) => {
        conn.query(sql, params, (err, result) => (err ? reject(err) : resolve(toResult<Row>([result]))));
      }),
  };
}

/**
 * Knex's pool as `lending` borrows from it, one mysql2 connection per statement or transaction of
 * taskrow's: a broken one (lost, interrupted, or given up by the engine: a statement may be in
 * flight on a silent socket) is closed before it goes back, and Knex's pool then replaces it (its
 * `validate` refuses a closing connection).
 */
function lenderOf(db: Knex): Lender<Mysql2CallbackConnection> {
  return {
    acquire: async () => (await db.client.acquireConnection()) as Mysql2CallbackConnection,
    release: async (conn, broken) => {
      if (broken) conn.destroy();
      await db.client.releaseConnection(conn);
    },
  };
}

/**
 * True once the application destroyed the Knex instance (`knex.destroy()` drops its pool) or, for a
 * transaction, once it committed or rolled back.
 */
export function knexClosed(db: Knex | Knex.Transaction): boolean {
  const trx = db as Partial<Knex.Transaction>;
  // A transaction's client has no pool of its own: only its completion closes it.
  if (trx.isTransaction === true) return typeof trx.isCompleted === 'function' && trx.isCompleted();
  return !(db.client as { pool?: unknown }).pool;
}

/**
 * The `SqlClient` over a Knex instance (mysql2 client). taskrow borrows one mysql2 connection of
 * Knex's pool for each of its statements and transactions (`lending`) and gives it back on every
 * path, closed when broken or when the engine stops waiting (`signal`: a silent socket never keeps
 * a pool slot; a statement still in flight has its server session killed, `killingAbandoned`). A transaction runs in `knex.transaction()` on that connection (Knex's `connection`
 * option: BEGIN, COMMIT and ROLLBACK are Knex's, the isolation level goes through its
 * `isolationLevel` option), its statements sent straight to the connection, skipping Knex's query
 * builder on the engine's hot path. `joined` wraps the application's `Knex.Transaction`: statements
 * run on its connection and Knex's commit or rollback decides.
 */
export function knexClient(db: Knex | Knex.Transaction, joined = false): SqlClient {
  const describeError = (err: unknown) => describeKnexError(err, () => knexClosed(db));
  const base = connectionOf(db);
  if (joined) {
    const committed = (db as Knex.Transaction).executionPromise;
    return {
      adapter: 'knex',
      joined: true,
      describeError,
      query: base.query,
      transaction: (fn) => fn(base),
      // Knex resolves it after the COMMIT, and rejects it after a rollback.
      afterCommit: (fn) => void committed?.then(fn, () => undefined),
    };
  }
  const killing = killingAbandoned(lenderOf(db as Knex), {
    threadOf: (conn) => conn.threadId ?? undefined,
    connectionOf: callbackConnectionOf,
    describeError,
  });
  const pool = killing.pool;
  const on = (conn: Mysql2CallbackConnection): SqlConnection => killing.watch(conn, callbackConnectionOf(conn));
  return {
    adapter: 'knex',
    joined: false,
    endsInterrupted: true,
    describeError,
    query: (sql, params, options) => lending(pool, describeError, options?.signal, (conn) => rollingBackInterrupted(on(conn), describeError, sql, params)),
    transaction: (fn, options) =>
      lending(pool, describeError, options?.signal, (conn) =>
        (db as Knex).transaction(() => fn(on(conn)), {
          connection: conn,
          ...(options?.isolation ? { isolationLevel: ISOLATION[options.isolation] } : {}),
        }),
      ),
  };
}
