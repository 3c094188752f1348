import type { MySqlTransactionConfig } from 'drizzle-orm/mysql-core';
import {
  driverClient,
  killingAbandoned,
  rollingBackInterrupted,
  serialClient,
  toSqlResult,
  waitsOf,
  type DriverConnection,
  type DriverPool,
  type EnqueueEmitter,
  type IsolationLevel,
  type SqlClient,
  type SqlConnection,
  type SqlResult,
  type SqlValue,
} from '@taskrow/core';
import { describeDrizzleError } from './errors.js';
import { toDrizzleSql } from './statement.js';

/*
 * Drizzle's objects are typed structurally here: an application's drizzle-orm is often another copy
 * than the one this package was built against (pnpm installs one copy per set of optional peers), and
 * Drizzle's classes, with their protected members, never match across copies. The factory checks the
 * real thing at run time (Drizzle's own `is()`, which works across copies).
 */

/** What taskrow calls on a Drizzle database or transaction (drizzle-orm/mysql2): `execute()` of a Drizzle `SQL`. */
export interface DrizzleExecutor {
  execute(query: never): PromiseLike<unknown>;
}

/** The application's transaction (the `tx` of `db.transaction()`): an executor that can `rollback()`. */
export interface DrizzleTransaction extends DrizzleExecutor {
  rollback(): never;
}

/** A Drizzle database over mysql2 (`drizzle(pool)`): it executes statements, opens transactions and holds the mysql2 client. */
export interface DrizzleDatabase extends DrizzleExecutor {
  // biome-ignore lint/suspicious/noExplicitAny: any database type is accepted
  transaction(fn: (tx: any) => Promise<unknown>, config?: never): PromiseLike<unknown>;
  readonly $client: unknown;
}

/** `db.transaction()` with the parameter types of this package's drizzle-orm. */
type Transact = <T>(fn: (tx: DrizzleExecutor) => Promise<T>, config?: MySqlTransactionConfig) => Promise<T>;

/** Drizzle's names for the isolation levels the engine asks for. */
const ISOLATION: Record<IsolationLevel, MySqlTransactionConfig['isolationLevel']> = {
  'READ UNCOMMITTED': 'read uncommitted',
  'READ COMMITTED': 'read committed',
  'REPEATABLE READ': 'repeatable read',
};

/**
 * Statements through `execute()` of a Drizzle database (any pooled connection) or transaction (its
 * connection). With the mysql2 driver `execute()` resolves to mysql2's `[rows or header, fields]`.
 */
function connectionOf(db: DrizzleExecutor): SqlConnection {
  return {
    query: async <Row>(text: string, params: readonly SqlValue[] = []) => {
      const response = await db.execute(toDrizzleSql(text, params) as never);
      return toSqlResult<Row>(Array.isArray(response) ? response[0] : undefined);
    },
  };
}

type Mysql2State = { pool?: Mysql2State; connection?: Mysql2State; _closed?: boolean; _closing?: boolean; getConnection?: unknown };

/** A connection of mysql2's callback API, lent by its pool. */
interface CallbackConnection {
  query(options: { sql: string; typeCast: TypeCast }, values: unknown, cb: (err: unknown, result: unknown) => void): unknown;
  beginTransaction(cb: (err: unknown) => void): unknown;
  commit(cb: (err: unknown) => void): unknown;
  rollback(cb: (err: unknown) => void): unknown;
  release(): void;
  /** Closes it and takes it out of its pool. */
  destroy(): void;
  /** The server's id of the connection's session, from its handshake. */
  readonly threadId?: number | null;
}

/** mysql2's callback-API pool (the `$client` of a database over a callback Pool, or `.pool` of a promise Pool). */
interface CallbackPool extends EnqueueEmitter {
  getConnection(cb: (err: unknown, conn: CallbackConnection) => void): void;
}

/** A lent callback connection with BEGIN, COMMIT and ROLLBACK as promises. */
interface LentConnection extends DriverConnection {
  readonly raw: CallbackConnection;
}

const settle = (call: (cb: (err: unknown) => void) => unknown): Promise<void> =>
  new Promise((resolve, reject) => void call((err) => (err ? reject(err) : resolve())));

/**
 * The database's mysql2 pool as `driverClient` lends it: one connection per statement or
 * transaction of taskrow's, destroyed instead of released when broken (lost, interrupted, or given
 * up by the engine); its `enqueue` event (the application waits for a connection) sends a worker's
 * kept connection back.
 */
function lenderOf(pool: CallbackPool): DriverPool<LentConnection> {
  return {
    acquire: () =>
      new Promise<LentConnection>((resolve, reject) =>
        pool.getConnection((err, raw) =>
          err
            ? reject(err)
            : resolve({
                raw,
                beginTransaction: () => settle((cb) => raw.beginTransaction(cb)),
                commit: () => settle((cb) => raw.commit(cb)),
                rollback: () => settle((cb) => raw.rollback(cb)),
              }),
        ),
      ),
    release: (conn, broken) => (broken ? conn.raw.destroy() : conn.raw.release()),
    ...waitsOf(pool),
  };
}

type TypeCast = (field: { type: string; string(): string | null }, next: () => unknown) => unknown;

/** DATE, DATETIME and TIMESTAMP as strings, as Drizzle's mysql2 session reads them in `execute()`. */
const asDrizzleReads: TypeCast = (field, next) => (field.type === 'TIMESTAMP' || field.type === 'DATETIME' || field.type === 'DATE' ? field.string() : next());

/** The callback-API pool under a database made over a mysql2 Pool, promise or callback API. */
function callbackPoolOf(db: DrizzleDatabase): CallbackPool {
  const c = db.$client as { pool?: { getConnection?: unknown } };
  return (typeof c.pool?.getConnection === 'function' ? c.pool : db.$client) as CallbackPool;
}

/** Statements on one lent connection, read as Drizzle's `execute()` reads them. */
function lentConnectionOf(conn: CallbackConnection): SqlConnection {
  return {
    query: <Row>(sql: string, params: readonly SqlValue[] = []) =>
      new Promise<SqlResult<Row>>((resolve, reject) => {
        conn.query({ sql, typeCast: asDrizzleReads }, params, (err, result) => (err ? reject(err) : resolve(toSqlResult<Row>(result))));
      }),
  };
}

/** True once the application ended the mysql2 client under the database (`pool.end()`, `connection.end()`), promise or callback API. */
export function mysql2ClientClosed(client: unknown): boolean {
  const c = (client ?? {}) as Mysql2State;
  return Boolean(c._closed || c._closing || c.pool?._closed || c.connection?._closing);
}

/** True when the database was made over a mysql2 Pool (promise or callback API) rather than one Connection. */
export function overPool(db: DrizzleDatabase): boolean {
  const c = (db.$client ?? {}) as Mysql2State;
  return typeof c.getConnection === 'function';
}

/**
 * The `SqlClient` over a Drizzle database (mysql2 driver). Over a Pool, taskrow's statements and
 * transactions run on connections lent from the database's mysql2 pool (`driverClient`, as the
 * mysql2 adapter does), read as Drizzle's `execute()` reads: each given back on every path,
 * destroyed when lost, interrupted (so a single enqueue is its `CALL`: `endsInterrupted`) or given
 * up by the engine (its server session killed when a statement was still in flight: `killingAbandoned`); a worker keeps one between its transactions while the
 * application waits for none. Over one mysql2 Connection, each of taskrow's transactions runs in
 * `db.transaction()` (the isolation level through Drizzle's `isolationLevel` option), taking turns
 * (`serialClient`) so two transactions never interleave on it.
 */
export function drizzleClient(db: DrizzleDatabase): SqlClient {
  const base = connectionOf(db);
  const transact = db.transaction.bind(db) as unknown as Transact;
  const client: SqlClient = {
    adapter: 'drizzle',
    joined: false,
    describeError: (err) => describeDrizzleError(err, () => mysql2ClientClosed(db.$client)),
    query: base.query,
    transaction: (fn, options) => transact((tx) => fn(connectionOf(tx)), options?.isolation ? { isolationLevel: ISOLATION[options.isolation] } : undefined),
  };
  if (overPool(db)) {
    const connectionOf = (conn: LentConnection): SqlConnection => lentConnectionOf(conn.raw);
    const killing = killingAbandoned(lenderOf(callbackPoolOf(db)), {
      threadOf: (conn) => conn.raw.threadId ?? undefined,
      connectionOf,
      describeError: client.describeError,
    });
    return driverClient<LentConnection>({
      adapter: 'drizzle',
      describeError: client.describeError,
      connectionOf: (conn) => killing.watch(conn, connectionOf(conn)),
      target: { pool: killing.pool },
    });
  }
  // One connection: an interrupted statement is rolled back on it before the next takes its turn.
  return serialClient({ ...client, endsInterrupted: true, query: (sql, params) => rollingBackInterrupted(base, client.describeError, sql, params) });
}

/**
 * The joined `SqlClient` over the application's Drizzle transaction (`tr.in(tx)`): statements run on
 * its connection, nothing begins or commits, and Drizzle's commit or rollback decides.
 */
export function drizzleTransactionClient(tx: DrizzleExecutor): SqlClient {
  const base = connectionOf(tx);
  return {
    adapter: 'drizzle',
    joined: true,
    describeError: (err) => describeDrizzleError(err, () => false),
    query: base.query,
    transaction: (fn) => fn(base),
  };
}
