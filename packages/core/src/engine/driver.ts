import type { DriverErrorInfo, IsolationLevel, SqlClient, SqlConnection, SqlResult, SqlValue } from '../port.js';
import { serialClient } from '../serial.js';
import { isInterrupted, noteRaisedAtCommit } from '../retry.js';
import { isolationStatement } from './isolation.js';
import { keptSession, SESSION_IDLE_MS } from './session.js';
import type { DriverConnection, DriverPool, Lender } from './lender.js';

export type { DriverConnection, DriverPool, Lender } from './lender.js';

/**
 * What the application passed to the adapter, already told apart by it:
 * - `joined`: statements on the connection of the application's open transaction (`tr.in(tx)`);
 *   taskrow MUST NOT begin, commit or roll back there.
 * - `pool`: one pooled connection lent per transaction, and one per statement in autocommit.
 * - `connection`: one connection the application owns, used in turns (`serialClient`).
 */
export type DriverTarget<C extends DriverConnection, P extends C = C> =
  | { readonly joined: SqlConnection }
  | { readonly pool: DriverPool<P> }
  | { readonly connection: C };

/** The driver-specific parts of a raw driver's `SqlClient`; `driverClient` supplies the rest. */
export interface DriverClientSpec<C extends DriverConnection, P extends C = C> {
  /** The adapter's name, for messages (`SqlClient.adapter`). */
  readonly adapter: string;
  /** Classifies a driver error (`SqlClient.describeError`); `lost` also decides a pooled connection's fate. */
  readonly describeError: (err: unknown) => DriverErrorInfo;
  /** The engine's `SqlConnection` over one driver connection: the adapter's per-query options and result shape. */
  readonly connectionOf: (conn: C) => SqlConnection;
  readonly target: DriverTarget<C, P>;
}

/** Runs `fn` between BEGIN and COMMIT on `conn`; ROLLBACK (errors ignored) and rethrow when it rejects. */
async function inTransaction<T>(
  conn: DriverConnection,
  sql: SqlConnection,
  fn: (c: SqlConnection) => Promise<T>,
  isolation: IsolationLevel | undefined,
): Promise<T> {
  if (isolation) await sql.query(isolationStatement(isolation));
  await conn.beginTransaction();
  try {
    const result = await fn(sql);
    // A retryable error here is a cluster's certification failure (InnoDB never deadlocks at COMMIT).
    await conn.commit().catch((err: unknown) => {
      noteRaisedAtCommit(err);
      throw err;
    });
    return result;
  } catch (err) {
    await conn.rollback().catch(() => undefined);
    throw err;
  }
}

/**
 * The `SqlClient` over a raw driver (mysql2, `mariadb`). A joined target runs `fn` directly in the
 * application's transaction. A pool lends one connection per transaction and MUST get it back
 * through `release` on every path, with `broken` set when the transaction failed with a `lost`
 * error or the pool calls the connection `unusable`. A single connection is wrapped in
 * `serialClient`, so that two transactions never interleave on it. The isolation statement is
 * core's; only the levels of `IsolationLevel` are accepted. A pooled transaction whose `signal`
 * aborts (the engine stopped waiting) has its connection destroyed at once.
 */
export function driverClient<C extends DriverConnection, P extends C = C>(spec: DriverClientSpec<C, P>): SqlClient {
  const { adapter, describeError, connectionOf, target } = spec;
  if ('joined' in target) {
    const conn = target.joined;
    return { adapter, joined: true, describeError, query: conn.query.bind(conn), transaction: (fn) => fn(conn) };
  }
  if ('pool' in target) return poolClient(adapter, describeError, connectionOf, target.pool);
  const conn = target.connection;
  const base = connectionOf(conn);
  return serialClient({
    adapter,
    joined: false,
    endsInterrupted: true,
    describeError,
    query: (sql, params) => rollingBackInterrupted(base, describeError, sql, params),
    transaction: (fn, options) => inTransaction(conn, base, fn, options?.isolation),
  });
}

/**
 * One statement on `conn`; when the server interrupted it (`isInterrupted`), a ROLLBACK on the
 * same connection ends a transaction the statement left open (a `CALL` killed inside its
 * procedure's transaction) before the error goes on, so the connection MUST then be one that
 * nothing else uses meanwhile (lent for this statement, or taking turns). How an adapter keeps
 * the promise of `SqlClient.endsInterrupted`; the ROLLBACK's own failure is ignored.
 */
export async function rollingBackInterrupted<Row>(
  conn: SqlConnection,
  describeError: (err: unknown) => DriverErrorInfo,
  sql: string,
  params?: readonly SqlValue[],
): Promise<SqlResult<Row>> {
  try {
    return await conn.query<Row>(sql, params);
  } catch (err) {
    if (isInterrupted(describeError(err))) await conn.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** A driver pool that emits `enqueue` when a caller waits for a connection (mysql2's and `mariadb`'s Pool). */
export interface EnqueueEmitter {
  on?(event: 'enqueue', listener: () => void): unknown;
  off?(event: 'enqueue', listener: () => void): unknown;
}

/** `DriverPool.onWait` over a pool's `enqueue` event, or nothing when the pool has no such event. */
export function waitsOf(pool: EnqueueEmitter): Pick<DriverPool<never>, 'onWait'> {
  const { on, off } = pool;
  if (typeof on !== 'function' || typeof off !== 'function') return {};
  return {
    onWait: (listener) => {
      on.call(pool, 'enqueue', listener);
      return () => void off.call(pool, 'enqueue', listener);
    },
  };
}

/**
 * Runs `work` on a connection of `pool`, given back exactly once: when `work` settles (destroyed,
 * `broken`, when it failed with a lost connection, or was interrupted by the server, which may
 * leave a procedure's transaction open on it, or the pool calls the connection unusable), or at
 * once, destroyed, when `signal` aborts (the engine stopped waiting: a statement may still be in
 * flight on it, and on a silent socket it would never come back). How every adapter that lends a
 * pooled connection to one statement or transaction keeps `QueryOptions.signal` and
 * `TransactionOptions.signal`; MUST NOT leave the connection out of the pool on any path.
 */
export async function lending<P, T>(
  pool: Lender<P>,
  describeError: (err: unknown) => DriverErrorInfo,
  signal: AbortSignal | undefined,
  work: (conn: P) => Promise<T>,
): Promise<T> {
  const conn = await pool.acquire();
  let returned = false;
  const giveBack = (broken: boolean): void | Promise<void> => {
    if (returned) return;
    returned = true;
    return pool.release(conn, broken);
  };
  const onAbort = (): void => void giveBack(true);
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let broken = false;
  try {
    return await work(conn);
  } catch (err) {
    const info = describeError(err);
    broken = info.lost === true || isInterrupted(info) || pool.unusable?.(conn) === true;
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await giveBack(broken);
  }
}

/**
 * A pool's client: one connection lent per transaction (see `driverClient`), and sessions that
 * keep one between transactions (`keptSession`) when the pool tells of its waiters.
 */
function poolClient<C extends DriverConnection, P extends C>(
  adapter: string,
  describeError: (err: unknown) => DriverErrorInfo,
  connectionOf: (conn: C) => SqlConnection,
  pool: DriverPool<P>,
): SqlClient {
  const plain: SqlClient = {
    adapter,
    joined: false,
    endsInterrupted: true,
    describeError,
    // The statement's connection is lent here so that it can be destroyed (see `lending`).
    query: (sql, params, options) => lending(pool, describeError, options?.signal, (conn) => connectionOf(conn).query(sql, params)),
    transaction: (fn, options) => lending(pool, describeError, options?.signal, (conn) => inTransaction(conn, connectionOf(conn), fn, options?.isolation)),
  };
  if (!pool.onWait) return plain;
  const onWait = waitSignal(pool.onWait.bind(pool));
  return {
    ...plain,
    session: (options) =>
      keptSession<P>({ pool, connectionOf, describeError, plain, onWait, timeoutMs: options?.timeoutMs ?? 30_000, idleMs: options?.idleMs ?? SESSION_IDLE_MS }),
  };
}

/**
 * One subscription to the pool's waiters per client, shared by its sessions (a worker each), so a
 * pool never carries more than one listener of a client.
 */
function waitSignal(onWait: (listener: () => void) => () => void): (listener: () => void) => () => void {
  const listeners = new Set<() => void>();
  let unsubscribe: (() => void) | undefined;
  return (listener) => {
    listeners.add(listener);
    unsubscribe ??= onWait(() => {
      for (const l of [...listeners]) l();
    });
    return () => {
      listeners.delete(listener);
      if (listeners.size > 0 || !unsubscribe) return;
      unsubscribe();
      unsubscribe = undefined;
    };
  };
}

/**
 * What a MySQL-protocol driver returns for one statement, as the port's `SqlResult`: an array is
 * the rows of a SELECT; anything else is the OK packet of a write, whose `affectedRows` and
 * `insertId` (numbers or bigints, missing read as 0) become numbers.
 */
export function toSqlResult<Row>(raw: unknown): SqlResult<Row> {
  if (Array.isArray(raw)) return { rows: raw as Row[], affectedRows: 0, insertId: 0 };
  const h = (raw ?? {}) as { affectedRows?: unknown; insertId?: unknown };
  return { rows: [], affectedRows: Number(h.affectedRows ?? 0), insertId: Number(h.insertId ?? 0) };
}
