import { createTaskrow, DatabaseError, InvalidArgumentError, type Taskrow, type TaskrowOptions } from '@taskrow/core';
import { sequelizeClient, sequelizeTransactionClient, type Mysql2CallbackConnection, type SequelizeInstance } from './client.js';
import { describeSequelizeError, isPlainError } from './errors.js';

/**
 * The application's Sequelize transaction (managed, the `t` of `sequelize.transaction(async (t) => ...)`,
 * or unmanaged, `await sequelize.transaction()`), typed structurally so that any copy of Sequelize fits.
 */
export interface SequelizeTransaction {
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /** Runs `fn` after the transaction commits (Sequelize's hook). */
  afterCommit(fn: () => void): void;
}

type Shape = Record<string, unknown> & { connectionManager?: Record<string, unknown>; sequelize?: unknown };

/** mysql2's CLIENT_FOUND_ROWS capability flag. */
const FOUND_ROWS = 2;

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return 'a function that is not a Sequelize instance';
  if (typeof value !== 'object') return typeof value;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'an object';
}

function isSequelize(value: unknown): value is SequelizeInstance {
  const o = value as Shape | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o['getDialect'] === 'function' &&
    typeof o['query'] === 'function' &&
    typeof o.connectionManager?.['getConnection'] === 'function'
  );
}

function isTransaction(value: unknown): boolean {
  const o = value as Shape | null;
  return typeof o === 'object' && o !== null && typeof o['commit'] === 'function' && typeof o['rollback'] === 'function' && isSequelize(o.sequelize);
}

function checkDialect(db: SequelizeInstance, what: string): void {
  const dialect = db.getDialect();
  if (dialect !== 'mysql') {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/sequelize ${what} expected a Sequelize instance with dialect "mysql" (mysql2; it serves MariaDB too), got dialect ${JSON.stringify(dialect)}`,
    );
  }
}

/** Checks what `taskrow()` was given: a Sequelize instance of the mysql dialect, not a transaction. */
function checkInstance(input: unknown): SequelizeInstance {
  if (isTransaction(input)) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      '@taskrow/sequelize taskrow() expected a Sequelize instance, got a Sequelize transaction: bind a transaction with tr.in(t)',
    );
  }
  if (!isSequelize(input)) throw new InvalidArgumentError('INVALID_CLIENT', `@taskrow/sequelize expected a Sequelize instance, got ${describe(input)}`);
  checkDialect(input, 'taskrow()');
  return input;
}

/**
 * Borrows one connection to check it counts matched rows: Sequelize connects with `-FOUND_ROWS`
 * unless `dialectOptions.flags` says otherwise, and taskrow's UPDATEs need matched-row counts.
 */
async function checkFoundRows(db: SequelizeInstance): Promise<void> {
  let conn: unknown;
  try {
    conn = await db.connectionManager.getConnection({ type: 'write' });
  } catch (err) {
    if (isPlainError(err)) throw new InvalidArgumentError('INVALID_CLIENT', '@taskrow/sequelize was given a Sequelize instance that has been closed');
    // A refused login or an unreachable server: a TaskrowError, as every other failure to connect.
    const { errno } = describeSequelizeError(err, () => false);
    throw new DatabaseError('DATABASE_ERROR', `@taskrow/sequelize could not connect: ${(err as Error).message}`, { cause: err, errno });
  }
  const flags = (conn as { config?: { clientFlags?: unknown } }).config?.clientFlags;
  db.connectionManager.releaseConnection(conn);
  if (typeof flags === 'number' && (flags & FOUND_ROWS) === 0) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      "@taskrow/sequelize needs UPDATE to report matched rows: create the Sequelize instance with dialectOptions: { flags: ['+FOUND_ROWS'] } (Sequelize's default is -FOUND_ROWS)",
    );
  }
}

/** Checks what `in()` was given: an open Sequelize transaction, and returns its connection. */
function checkTransaction(tx: unknown): Mysql2CallbackConnection {
  if (!isTransaction(tx)) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/sequelize in() expected a Sequelize transaction (the \`t\` of sequelize.transaction()), got ${isSequelize(tx) ? 'a Sequelize instance' : describe(tx)}`,
    );
  }
  const t = tx as Shape;
  checkDialect(t.sequelize as SequelizeInstance, 'in()');
  if (t['finished'] !== undefined) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/sequelize in() was given a Sequelize transaction that has already finished (${String(t['finished'])})`,
    );
  }
  const conn = t['connection'] as Partial<Mysql2CallbackConnection> | undefined;
  if (!conn || typeof conn.query !== 'function') {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      '@taskrow/sequelize in() was given a Sequelize transaction that has no connection yet (await sequelize.transaction() before using it)',
    );
  }
  return conn as Mysql2CallbackConnection;
}

/**
 * Connects taskrow to a Sequelize instance (dialect `mysql`) the application owns; taskrow never
 * closes it. Resolves once the server's version is known; rejects with `UNSUPPORTED_SERVER` on
 * servers without SKIP LOCKED, and with `INVALID_CLIENT` when `sequelize` is not an open Sequelize
 * instance of the mysql dialect connecting with `FOUND_ROWS` (a transaction, another dialect, a
 * closed instance).
 *
 * `tr.in(t)` binds taskrow to the application's Sequelize transaction, managed or unmanaged: writes
 * made through it commit or roll back with `t`.
 */
export async function taskrow(sequelize: SequelizeInstance, options?: TaskrowOptions): Promise<Taskrow<SequelizeTransaction>> {
  const db = checkInstance(sequelize);
  await checkFoundRows(db);
  return createTaskrow<SequelizeTransaction>({
    client: sequelizeClient(db),
    joinTransaction: (tx) => ({
      ...sequelizeTransactionClient(checkTransaction(tx)),
      // Sequelize runs these hooks after the COMMIT only.
      afterCommit: (fn: () => void) => tx.afterCommit(fn),
    }),
    options,
    closedClient: 'a Sequelize instance that has been closed',
  });
}
