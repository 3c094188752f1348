import { rollingBackInterrupted, toSqlResult, type IsolationLevel, type SqlClient, type SqlConnection, type SqlResult, type SqlValue } from '@taskrow/core';
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
 * The `SqlClient` over a TypeORM DataSource. Each of taskrow's transactions runs in
 * `dataSource.manager.transaction(isolationLevel?, ...)`, which takes one QueryRunner (one pooled
 * connection), sends `SET TRANSACTION ISOLATION LEVEL` and `START TRANSACTION`, and releases it on
 * every path; a single statement takes a QueryRunner of its own and releases it, rolled back first
 * when the server interrupted the statement (`endsInterrupted`). Statements run on the QueryRunner's
 * mysql2 connection (`queryRunner.connect()`).
 */
export function typeormClient(ds: TypeormDataSource): SqlClient {
  const inTransaction = <T>(fn: (conn: SqlConnection) => Promise<T>, isolation?: IsolationLevel): Promise<T> => {
    const body = (m: TypeormManager): Promise<T> => {
      const runner = runnerOf(m);
      return fn(connectionOf(() => runner.connect()));
    };
    return isolation ? ds.manager.transaction(isolation, body) : ds.manager.transaction(body);
  };
  const describeError = (err: unknown) => describeTypeormError(err, () => !ds.isInitialized);
  return {
    adapter: 'typeorm',
    joined: false,
    describeError,
    endsInterrupted: true,
    async query(sql, params) {
      const runner = ds.createQueryRunner();
      try {
        return await rollingBackInterrupted(connectionOf(() => runner.connect()), describeError, sql, params);
      } finally {
        await runner.release();
      }
    },
    transaction: (fn, options) => inTransaction(fn, options?.isolation),
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
