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

/** Runs one compiled query on a Kysely instance or transaction, given up when `signal` aborts. */
type Runner = (on: AnyKysely, query: CompiledQuery, signal: AbortSignal) => Promise<QueryResult<unknown>>;

/** Runs `consumer` on a connection of a Kysely instance's pool. */
type ControlProvider = (consumer: (conn: DatabaseConnection) => Promise<void>) => Promise<void>;

/** What Kysely 0.29's MySQL connection adds for its `'kill session'` abort strategy (0.28's has neither). */
interface KillableConnection extends DatabaseConnection {
  collectSessionInfo?(): Promise<void>;
  killSession?(control: ControlProvider): Promise<void>;
}

/**
 * How a statement given `signal` is given up: the server session it runs on is KILLed over another
 * connection of `db`'s pool while the statement is still in flight, so the server ends it and rolls
 * the session back (its locks go). On Kysely 0.29 through the connection's own `killSession`, which
 * also destroys the pooled mysql2 connection (a silent socket never keeps its pool slot); Kysely's
 * `executeQuery(query, { signal, inflightQueryAbortStrategy: 'kill session' })` is not used, since
 * inside `db.connection()` or a transaction it would send that KILL on the very connection it
 * gives up. Kysely 0.28 can neither abort a query nor hand out its mysql2 connection: each
 * connection's session id is read once (`CONNECTION_ID()`), and the `KILL` needs a second
 * connection of the pool (in a pool of one it waits for the statement to end by itself, and is then
 * not sent); mysql2 then fails the statement as a lost connection and its pool drops the
 * connection. A failed KILL is dropped.
 */
function killingRunner(db: AnyKysely): Runner {
  const executor = db.getExecutor();
  const control: ControlProvider = (consumer) => executor.provideConnection(consumer);
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
  /** The kill of `conn`'s session, for a statement that `running()` tells is still in flight. */
  const killerOf = async (conn: KillableConnection): Promise<(running: () => boolean) => Promise<unknown>> => {
    if (conn.killSession && conn.collectSessionInfo) {
      await conn.collectSessionInfo();
      // Kysely checks that the statement still runs before it sends the KILL.
      return () => conn.killSession!(control);
    }
    const thread = await threadOf(conn);
    return (running) =>
      control(async (side) => {
        if (running() && Number.isSafeInteger(thread) && thread > 0) await side.executeQuery(CompiledQuery.raw(`KILL CONNECTION ${thread}`));
      });
  };
  return (on, query, signal) =>
    on.getExecutor().provideConnection(async (conn) => {
      signal.throwIfAborted();
      const kill = await killerOf(conn);
      let running = true;
      const onAbort = (): void => void kill(() => running).catch(() => undefined);
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
 * transaction (its connection); one given `signal` and `kill` is given up as `killingRunner` says.
 * Kysely's `QueryResult` already normalises the driver's answer: `numAffectedRows` and `insertId`
 * arrive as bigints and leave as numbers.
 */
function connectionOf(db: AnyKysely, signal?: AbortSignal, kill?: Runner): SqlConnection {
  const run = (query: CompiledQuery): Promise<QueryResult<unknown>> => (signal && kill ? kill(db, query, signal) : db.executeQuery(query));
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
