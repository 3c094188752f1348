import * as kysely from 'kysely';
import { CompiledQuery, type DatabaseConnection, type Kysely, type QueryResult, type Transaction } from 'kysely';
import { rollingBackInterrupted, TaskrowError, type IsolationLevel, type SqlClient, type SqlConnection, type SqlValue } from '@taskrow/core';
import { describeKyselyError, isDriverError } from './errors.js';

/** Kysely's names for the isolation levels the engine asks for. */
const ISOLATION = {
  'READ UNCOMMITTED': 'read uncommitted',
  'READ COMMITTED': 'read committed',
  'REPEATABLE READ': 'repeatable read',
} as const satisfies Record<IsolationLevel, string>;

// biome-ignore lint/suspicious/noExplicitAny: any database type is accepted
type AnyKysely = Kysely<any>;

/**
 * Kysely 0.29 made queries abortable (`executeQuery(query, { signal, inflightQueryAbortStrategy })`,
 * released with its `AbortedTransactionError`). Kysely 0.28 takes a deprecated query id in that
 * place and has no way to abort: a statement there is only abandoned by the engine.
 */
const ABORTABLE = 'AbortedTransactionError' in kysely;

/**
 * How a statement given `signal` runs: on Kysely 0.29, aborting it destroys the pooled mysql2
 * connection it runs on (so a silent socket never keeps its pool slot) and KILLs the server
 * session over a new connection (`'kill session'`), which rolls back what it held.
 */
const abortable = (signal: AbortSignal | undefined): [] | [{ signal: AbortSignal; inflightQueryAbortStrategy: 'kill session' }] =>
  ABORTABLE && signal ? [{ signal, inflightQueryAbortStrategy: 'kill session' }] : [];

/** Runs one compiled query on a Kysely instance or transaction, given up when `signal` aborts. */
type Runner = (on: AnyKysely, query: CompiledQuery, signal: AbortSignal) => Promise<QueryResult<unknown>>;

/**
 * How a statement given `signal` is given up on Kysely 0.28, which can neither abort a query nor
 * hand out its mysql2 connection: each connection's session id is read once (`CONNECTION_ID()`),
 * and an abort while the statement is still in flight sends `KILL <id>` over another connection
 * of `db`. The server ends the statement and the session (so its locks go), mysql2 fails the
 * statement as a lost connection, and its pool drops the connection. The `KILL` needs a second
 * connection of the pool: in a pool of one it waits for the statement to end by itself, and is
 * then not sent. Its failure is dropped.
 */
function killingRunner(db: AnyKysely): Runner {
  const threads = new WeakMap<DatabaseConnection, number>();
  const threadOf = async (conn: DatabaseConnection): Promise<number> => {
    let id = threads.get(conn);
    if (id === undefined) {
      const { rows } = await conn.executeQuery<{ id: unknown }>(CompiledQuery.raw('SELECT CONNECTION_ID() AS id'));
      id = Number(rows[0]?.id);
      threads.set(conn, id);
    }
    return id;
  };
  const kill = (thread: number, running: () => boolean): void =>
    void db
      .connection()
      .execute(async (side) => {
        if (running() && Number.isSafeInteger(thread) && thread > 0) await side.executeQuery(CompiledQuery.raw(`KILL ${thread}`));
      })
      .catch(() => undefined);
  return (on, query, signal) =>
    on.getExecutor().provideConnection(async (conn) => {
      signal.throwIfAborted();
      const thread = await threadOf(conn);
      let running = true;
      const onAbort = (): void => kill(thread, () => running);
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        return await conn.executeQuery(query);
      } finally {
        running = false;
        signal.removeEventListener('abort', onAbort);
      }
    });
}

/**
 * Statements through `executeQuery` of a Kysely instance (any pooled connection) or of a
 * transaction (its connection), given up when `signal` aborts: on Kysely 0.29 by Kysely itself
 * (see `abortable`), on 0.28 by `kill` (see `killingRunner`). Kysely's `QueryResult` already
 * normalises the driver's answer: `numAffectedRows` and `insertId` arrive as bigints and leave as
 * numbers.
 */
function connectionOf(db: AnyKysely, signal?: AbortSignal, kill?: Runner): SqlConnection {
  // Typed as Kysely 0.28 declares it; the options argument exists from 0.29 on (see ABORTABLE).
  const execute = db.executeQuery.bind(db) as <Row>(
    query: CompiledQuery<Row>,
    ...options: ReturnType<typeof abortable>
  ) => ReturnType<AnyKysely['executeQuery']>;
  const run = (query: CompiledQuery): Promise<unknown> => (!ABORTABLE && signal && kill ? kill(db, query, signal) : execute(query, ...abortable(signal)));
  return {
    async query<Row>(sql: string, params: readonly SqlValue[] = []) {
      const r = (await run(CompiledQuery.raw(sql, params as unknown[]))) as {
        rows: Row[];
        numAffectedRows?: bigint;
        insertId?: bigint;
      };
      return { rows: [...r.rows], affectedRows: Number(r.numAffectedRows ?? 0n), insertId: Number(r.insertId ?? 0n) };
    },
  };
}

/**
 * The `SqlClient` over a Kysely instance. Each of taskrow's transactions runs in
 * `db.transaction().execute()`, which lends one pooled connection and gives it back on every path;
 * the isolation level goes through Kysely's `setIsolationLevel`. `joined` wraps the application's
 * `Transaction` (or `ControlledTransaction`): statements run on its connection and the application
 * commits or rolls back. Plugins are left out (`withoutPlugins()`): a CamelCasePlugin would rename
 * the engine's columns.
 */
export function kyselyClient(input: AnyKysely | Transaction<unknown>, joined = false): SqlClient {
  const db = (input as AnyKysely).withoutPlugins();
  /** Errors that came from a client the application destroyed (see `markIfClosed`). */
  const closedErrors = new WeakSet<object>();
  const describeError = (err: unknown) => describeKyselyError(err, () => typeof err === 'object' && err !== null && closedErrors.has(err));
  const base = connectionOf(db);
  const kill = killingRunner(db);
  if (joined) {
    return { adapter: 'kysely', joined: true, describeError, query: base.query, transaction: (fn) => fn(base) };
  }

  /**
   * Kysely and mysql2 report a destroyed instance or an ended pool with a plain Error (no errno,
   * no code). When such an error arrives, asking for a connection tells the cases apart without
   * reading the message: it fails the same way only when the client itself is closed.
   */
  async function markIfClosed(err: unknown): Promise<void> {
    if (!(err instanceof Error) || err instanceof TaskrowError || isDriverError(err)) return;
    const open = await db
      .connection()
      .execute(async () => true)
      .catch((e: unknown) => isDriverError(e));
    if (!open) closedErrors.add(err);
  }
  const guarded = <T>(op: () => Promise<T>): Promise<T> =>
    op().catch(async (err: unknown) => {
      await markIfClosed(err);
      throw err;
    });

  return {
    adapter: 'kysely',
    joined: false,
    describeError,
    endsInterrupted: true,
    // One connection lent per statement, so that an interrupted one is rolled back on it.
    query: (sql, params, options) =>
      guarded(() => db.connection().execute((conn) => rollingBackInterrupted(connectionOf(conn, options?.signal, kill), describeError, sql, params))),
    // Kysely's BEGIN and COMMIT take no signal: an abort reaches the statements between them.
    transaction: (fn, options) =>
      guarded(() => {
        let builder = db.transaction();
        if (options?.isolation) builder = builder.setIsolationLevel(ISOLATION[options.isolation]);
        return builder.execute((trx) => fn(connectionOf(trx, options?.signal, kill)));
      }),
  };
}
