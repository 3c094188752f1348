import type { Knex } from 'knex';
import { rollingBackInterrupted, toSqlResult, type DriverErrorInfo, type IsolationLevel, type SqlClient, type SqlConnection, type SqlResult, type SqlValue } from '@taskrow/core';
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
    query: async <Row>(sql: string, params: readonly SqlValue[] = []) =>
      toResult<Row>(await db.raw(sql, params as unknown as readonly Knex.RawBinding[])),
  };
}

/** The callback API of the mysql2 connection Knex lends a transaction. */
interface Mysql2CallbackConnection {
  query(sql: string, values: unknown, cb: (err: unknown, result: unknown) => void): void;
}

/**
 * Statements of taskrow's own transactions, sent straight to the mysql2 connection that Knex's
 * `knex.transaction()` holds (Knex lends it to the transaction's own statements the same way, via
 * `trx.client.acquireConnection()`). This skips Knex's query builder machinery on the engine's
 * hot path; BEGIN, COMMIT, ROLLBACK and the connection's return to the pool stay Knex's.
 */
async function transactionConnectionOf(trx: Knex.Transaction): Promise<SqlConnection> {
  return callbackConnectionOf((await trx.client.acquireConnection()) as Mysql2CallbackConnection);
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
 * One statement in autocommit on a connection lent by Knex's pool for it alone and given back on
 * every path, rolled back first when the server interrupted it (`SqlClient.endsInterrupted`).
 */
async function lentStatement<Row>(db: Knex, describeError: (err: unknown) => DriverErrorInfo, sql: string, params?: readonly SqlValue[]): Promise<SqlResult<Row>> {
  const conn = (await db.client.acquireConnection()) as Mysql2CallbackConnection;
  try {
    return await rollingBackInterrupted<Row>(callbackConnectionOf(conn), describeError, sql, params);
  } finally {
    await db.client.releaseConnection(conn);
  }
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
 * The `SqlClient` over a Knex instance (mysql2 client). Each of taskrow's transactions runs in
 * `knex.transaction()`, which lends one pooled connection and gives it back on every path; the
 * isolation level goes through Knex's own `isolationLevel` option. `joined` wraps the application's
 * `Knex.Transaction`: statements run on its connection and Knex's commit or rollback decides.
 */
export function knexClient(db: Knex | Knex.Transaction, joined = false): SqlClient {
  const describeError = (err: unknown) => describeKnexError(err, () => knexClosed(db));
  const base = connectionOf(db);
  if (joined) {
    return { adapter: 'knex', joined: true, describeError, query: base.query, transaction: (fn) => fn(base) };
  }
  return {
    adapter: 'knex',
    joined: false,
    endsInterrupted: true,
    describeError,
    query: (sql, params) => lentStatement(db as Knex, describeError, sql, params),
    transaction: (fn, options) =>
      db.transaction(async (trx) => fn(await transactionConnectionOf(trx)), options?.isolation ? { isolationLevel: ISOLATION[options.isolation] } : undefined),
  };
}
