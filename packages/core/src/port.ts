/**
 * The port between taskrow's SQL engine and a database driver. An adapter implements `SqlClient`
 * over a client the application owns; the engine issues every statement through it.
 */

/** A value bound to a `?` placeholder. Buffers bind as binary strings. */
export type SqlValue = string | number | bigint | boolean | null | Buffer | Date;

/** What one statement returned. */
export interface SqlResult<Row = Record<string, unknown>> {
  /** Result rows for a SELECT; [] for other statements. */
  readonly rows: Row[];
  /**
   * For INSERT / DELETE: rows inserted / deleted. For UPDATE: rows matched (found), as drivers
   * report with CLIENT_FOUND_ROWS; the engine never relies on changed-row counts.
   */
  readonly affectedRows: number;
  /** The first AUTO_INCREMENT id an INSERT generated, 0 when none. */
  readonly insertId: number;
}

/** One connection (or a transaction on one connection) that runs statements. */
export interface SqlConnection {
  /**
   * Runs one statement with `?` placeholders bound to `params`, and rejects with the driver's
   * error. The engine passes every caller-supplied value through `params`; the only values it writes
   * into the SQL text itself are table names (built from a validated prefix), integer `LIMIT`s it
   * validated, and constants of its own (phases, placeholder lists). How `params` travel is the
   * driver's: mysql2's and `mariadb`'s `query()` escape them into the text on the client (a text
   * protocol statement), which is safe for every `SqlValue`.
   */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[]): Promise<SqlResult<Row>>;
}

/** How the engine runs one transaction. */
export interface TransactionOptions {
  readonly isolation?: IsolationLevel;
  /**
   * Aborted when the engine gives up waiting for the transaction (no answer within its bound).
   * The adapter SHOULD then destroy the connection (never return it to the pool): a statement may
   * still be in flight on it. The engine stops waiting either way.
   */
  readonly signal?: AbortSignal;
}

/**
 * Isolation levels the engine may ask a transaction for. READ UNCOMMITTED is asked only by the
 * doorbell's ring (see `queue/wake/doorbell.ts`), which must see sleepers' uncommitted registrations.
 */
export type IsolationLevel = 'READ UNCOMMITTED' | 'READ COMMITTED' | 'REPEATABLE READ';

/** What the adapter knows about a driver error, read from errno / code fields, never from message text. */
export interface DriverErrorInfo {
  /** The server's error number (1213 deadlock, 1205 lock wait timeout, ...). */
  readonly errno?: number;
  /** The driver's own code (`PROTOCOL_CONNECTION_LOST`, `ECONNRESET`, ...). */
  readonly code?: string;
  /** The connection is gone (lost, reset, refused): a retry on a fresh connection may succeed. */
  readonly lost?: boolean;
  /** The client the application passed was closed (an ended pool); retrying cannot help. */
  readonly closed?: boolean;
}

/** How the engine runs one autocommit statement through a client. */
export interface QueryOptions {
  /**
   * Aborted when the engine gives up waiting for the statement. An adapter that lends the
   * statement a connection of a pool SHOULD then destroy that connection: a statement with no
   * answer on a silent socket would otherwise keep it from the pool for good.
   */
  readonly signal?: AbortSignal;
}

/** What an adapter implements. */
export interface SqlClient extends SqlConnection {
  /** `SqlConnection.query`, in autocommit (or in the joined transaction); see `QueryOptions`. */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly SqlValue[], options?: QueryOptions): Promise<SqlResult<Row>>;
  /** The adapter's name, for messages (`mysql2`, `mariadb`, `knex`, `kysely`). */
  readonly adapter: string;
  /**
   * True when this client is a transaction the application opened: statements run inside it, the
   * engine MUST NOT begin, commit or retry, and the application's commit or rollback decides.
   */
  readonly joined: boolean;
  /**
   * On a joined client, where the adapter can see the application's transaction end: calls `fn`
   * once after that transaction commits, never after a rollback (Knex's `executionPromise`,
   * Sequelize's `afterCommit`). taskrow wakes this process's idle workers with it for the jobs the
   * transaction enqueued. Absent where the transaction's end cannot be seen: workers then find
   * those jobs at their next poll.
   */
  readonly afterCommit?: (fn: () => void) => void;
  /**
   * True when a statement of `query` that fails interrupted (`isInterrupted`: `KILL QUERY`, a
   * statement time limit) never leaves its connection inside a transaction: the adapter destroys
   * the pooled connection it lent the statement, or rolls back the one connection it runs on. MySQL
   * runs no handler of a stored procedure for a `KILL QUERY`, so a `CALL` interrupted inside the
   * procedure's transaction leaves that transaction open, and whoever used the connection next
   * would commit it. The engine sends a statement that opens a transaction of its own (the
   * enqueue's `CALL`) only through a client that says so; others get the transaction instead.
   */
  readonly endsInterrupted?: boolean;
  /**
   * Runs `fn` on one connection between BEGIN and COMMIT; ROLLBACK when `fn` rejects (rethrowing).
   * MUST release the connection on every path. On a joined client, runs `fn` in the application's
   * transaction without BEGIN / COMMIT.
   */
  transaction<T>(fn: (conn: SqlConnection) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Classifies a driver error (see `DriverErrorInfo`). */
  describeError(err: unknown): DriverErrorInfo;
  /**
   * Optional: a client of the same database whose transactions keep one pooled connection
   * between them (see `SqlSession`). Clients that cannot tell when their pool runs short leave
   * it out; the engine then runs every transaction through `transaction`.
   */
  session?(options?: SessionOptions): SqlSession;
}

/** How a `SqlSession` bounds what it sends on its own (outside the engine's transactions). */
export interface SessionOptions {
  /**
   * The longest the session waits for the end of its chained transaction before it gives the
   * connection back; past it the connection is destroyed. Default 30,000 ms.
   */
  readonly timeoutMs?: number;
  /**
   * How long the kept connection may sit unused before it goes back to the pool. Default
   * 5,000 ms (a worker's stream of claims); shorter for callers whose streams come in bursts.
   */
  readonly idleMs?: number;
}

/**
 * A client that keeps one connection of the pool between its transactions, so that one caller's
 * stream of short transactions (a worker's claims and acks) costs no BEGIN or isolation statement
 * each. It MUST give the connection back, its transaction ended, as soon as another caller waits
 * for a connection of the pool, after a short idle time, on `end()`, and on any failure; it MUST
 * NOT hand a connection back inside an open transaction. A transaction asked while the kept
 * connection is busy runs on a connection of its own, as through the plain client. `query` is
 * the plain client's (autocommit).
 */
export interface SqlSession extends SqlClient {
  /** Gives the kept connection back (its transaction ended) once no transaction runs on it; later transactions go through the pool. MUST NOT reject. */
  end(): Promise<void>;
}
