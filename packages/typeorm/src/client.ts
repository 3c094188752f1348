import {
  killingAbandoned,
  lending,
  rollingBackInterrupted,
  toSqlResult,
  type IsolationLevel,
  type Lender,
  type SqlClient,
  type SqlConnection,
  type SqlResult,
  type SqlValue,
} from '@taskrow/core';
import { describeTypeormError } from './errors.js';

/*
 * TypeORM's objects are typed structurally: the application's typeorm may be another copy than the
 * one this package was built against (one per set of its many optional peers), and classes with
 * private members never match across copies. The factory checks what it was given at run time.
 */

/** A TypeORM QueryRunner: it holds one pooled connection (`connect()`) until `release()`. */
export interface TypeormQueryRunner {
  connect(): Promise<unknown>;
  release(): Promise<void>;
  /** The EntityManager on this QueryRunner: its `transaction()` runs here and leaves the release to the caller. */
  readonly manager: TypeormManager;
}

/** An EntityManager: inside a transaction it carries the transaction's QueryRunner. */
export interface TypeormManager {
  readonly queryRunner?: TypeormQueryRunner;
  transaction<T>(isolationLevel: IsolationLevel, runInTransaction: (manager: TypeormManager) => Promise<T>): Promise<T>;
  transaction<T>(runInTransaction: (manager: TypeormManager) => Promise<T>): Promise<T>;
}

/** A TypeORM DataSource (type `mysql` or `mariadb`), typed structurally. */
export interface TypeormDataSource {
  readonly isInitialized: boolean;
  readonly options: { readonly type: string };
  readonly manager: TypeormManager;
  createQueryRunner(): TypeormQueryRunner;
}

/** The application's transaction: an EntityManager inside `transaction()`, or a QueryRunner after `startTransaction()`. */
export type TypeormTransaction = TypeormManager | TypeormQueryRunner;

/** The mysql2 connection (callback API) a TypeORM QueryRunner holds. */
interface Mysql2CallbackConnection {
  query(options: { sql: string; typeCast: TypeCast }, values: unknown, cb: (err: unknown, result: unknown) => void): unknown;
  /** Closes it and takes it out of its pool (a later `release()` of it does nothing). */
  destroy(): void;
  /** The server's id of the connection's session, from its handshake. */
  readonly threadId?: number | null;
}

/** A QueryRunner taskrow took, and the mysql2 connection it holds. */
interface Taken {
  readonly runner: TypeormQueryRunner;
  readonly conn: Mysql2CallbackConnection;
}

/**
 * The DataSource's pool as `lending` borrows from it: a QueryRunner of taskrow's own, connected,
 * for each statement or transaction, released on every path; its connection is destroyed first
 * when broken (lost, interrupted, or given up by the engine: a statement may be in flight on a
 * silent socket), so the pool makes another in its place.
 */
function lenderOf(ds: TypeormDataSource): Lender<Taken> {
  return {
    acquire: async () => {
      const runner = ds.createQueryRunner();
      try {
        return { runner, conn: (await runner.connect()) as Mysql2CallbackConnection };
      } catch (err) {
        await runner.release().catch(() => undefined);
        throw err;
      }
    },
    release: async ({ runner, conn }, broken) => {
      if (broken) conn.destroy();
      await runner.release().catch(() => undefined);
    },
  };
}

type TypeCast = (field: { type: string; string(): string | null }, next: () => unknown) => unknown;

/**
 * BIGINT as a number when it is a safe integer, else as a string (mysql2's `supportBigNumbers`
 * without `bigNumberStrings`). TypeORM connects with `bigNumberStrings: true`, which would hand
 * taskrow every BIGINT (and COUNT) as a string; this per-statement typeCast applies to taskrow's
 * statements only, never to yours.
 */
const bigintsAsNumbers: TypeCast = (field, next) => {
  if (field.type !== 'LONGLONG') return next();
  const text = field.string();
  if (text === null) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
};

/** Statements on the mysql2 connection `connection()` resolves to: `?` values bound by mysql2's `query()`. */
function connectionOf(connection: () => Promise<unknown>): SqlConnection {
  return {
    async query<Row>(sql: string, params: readonly SqlValue[] = []): Promise<SqlResult<Row>> {
      const conn = (await connection()) as Mysql2CallbackConnection;
      return new Promise((resolve, reject) => {
        conn.query({ sql, typeCast: bigintsAsNumbers }, params, (err, result) => (err ? reject(err) : resolve(toSqlResult<Row>(result))));
      });
    },
  };
}

/** The QueryRunner of a transaction's EntityManager, or the QueryRunner itself. */
export function runnerOf(tx: TypeormTransaction): TypeormQueryRunner {
  const runner = (tx as TypeormManager).queryRunner ?? (tx as TypeormQueryRunner);
  if (typeof runner.connect !== 'function') throw new TypeError('a TypeORM transaction without a QueryRunner');
  return runner;
}

/**
 * The `SqlClient` over a TypeORM DataSource. Each of taskrow's statements and transactions takes a
 * QueryRunner of its own (one pooled connection) through `lending`, which releases it on every path
 * and destroys its connection first when it broke or when the engine stops waiting (`signal`: a
 * silent socket never keeps a slot of the pool; a statement still in flight has its server session
 * killed, `killingAbandoned`). A transaction runs in that QueryRunner's
 * `manager.transaction(isolationLevel?, ...)` (TypeORM sends `SET TRANSACTION ISOLATION LEVEL`,
 * `START TRANSACTION`, COMMIT or ROLLBACK); a single statement is rolled back first when the server
 * interrupted it (`endsInterrupted`). Statements go to the QueryRunner's mysql2 connection.
 */
export function typeormClient(ds: TypeormDataSource): SqlClient {
  const describeError = (err: unknown) => describeTypeormError(err, () => !ds.isInitialized);
  const on = ({ conn }: Taken): SqlConnection => connectionOf(async () => conn);
  const killing = killingAbandoned(lenderOf(ds), { threadOf: ({ conn }) => conn.threadId ?? undefined, connectionOf: on, describeError });
  const pool = killing.pool;
  const inTransaction = <T>(fn: (conn: SqlConnection) => Promise<T>, isolation: IsolationLevel | undefined, signal: AbortSignal | undefined): Promise<T> =>
    lending(pool, describeError, signal, (taken) => {
      const body = (): Promise<T> => fn(killing.watch(taken, on(taken)));
      const { runner } = taken;
      return isolation ? runner.manager.transaction(isolation, body) : runner.manager.transaction(body);
    });
  return {
    adapter: 'typeorm',
    joined: false,
    describeError,
    endsInterrupted: true,
    query: (sql, params, options) =>
      lending(pool, describeError, options?.signal, (taken) => rollingBackInterrupted(killing.watch(taken, on(taken)), describeError, sql, params)),
    transaction: (fn, options) => inTransaction(fn, options?.isolation, options?.signal),
  };
}

/**
 * The joined `SqlClient` over the application's transaction (an EntityManager inside
 * `transaction()`, or a QueryRunner after `startTransaction()`): statements run on its connection,
 * nothing begins or commits, and the application decides.
 */
export function typeormTransactionClient(tx: TypeormTransaction): SqlClient {
  const runner = runnerOf(tx);
  const base = connectionOf(() => runner.connect());
  return {
    adapter: 'typeorm',
    joined: true,
    describeError: (err) => describeTypeormError(err, () => false),
    query: base.query,
    transaction: (fn) => fn(base),
  };
}
