import { entityKind, is } from 'drizzle-orm';
import { MySqlDatabase, MySqlTransaction } from 'drizzle-orm/mysql-core';
import { MySql2Session } from 'drizzle-orm/mysql2';
import { createTaskrow, InvalidArgumentError, type Taskrow, type TaskrowOptions } from '@taskrow/core';
import { drizzleClient, drizzleTransactionClient, mysql2ClientClosed, type DrizzleDatabase, type DrizzleExecutor, type DrizzleTransaction } from './client.js';

/** Drizzle's name for the class of `value` (`MySql2Database`, `NodePgDatabase`, `MySqlSelectBase`, ...), if it is a Drizzle object. */
function drizzleKind(value: object): string | undefined {
  const kind = (value.constructor as { [entityKind]?: unknown } | undefined)?.[entityKind];
  return typeof kind === 'string' ? kind : undefined;
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== 'object') return typeof value;
  const kind = drizzleKind(value);
  if (kind && typeof (value as { execute?: unknown }).execute === 'function' && !is(value, MySqlDatabase)) {
    return typeof (value as { transaction?: unknown }).transaction === 'function'
      ? `a Drizzle ${kind} (another dialect)`
      : `a Drizzle ${kind} (pass the database, \`db\`, not a query)`;
  }
  if (kind) return `a Drizzle ${kind}`;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'an object';
}

/** The session of a Drizzle MySQL database or transaction; only the mysql2 driver's is accepted. */
function checkDriver(db: object, what: string): void {
  const session = (db as { session?: object }).session;
  if (!is(session, MySql2Session)) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/drizzle ${what} expected a Drizzle database of the mysql2 driver (drizzle-orm/mysql2), got one whose session is ${session ? describe(session) : 'missing'}`,
    );
  }
}

/** Checks what `taskrow()` was given: an open Drizzle mysql2 database, not a transaction. */
function checkDatabase(db: unknown): DrizzleDatabase {
  if (!is(db, MySqlDatabase)) {
    throw new InvalidArgumentError('INVALID_CLIENT', `@taskrow/drizzle expected a Drizzle database from drizzle-orm/mysql2, got ${describe(db)}`);
  }
  if (is(db, MySqlTransaction)) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      '@taskrow/drizzle taskrow() expected a Drizzle database, got a Drizzle transaction: bind a transaction with tr.in(tx)',
    );
  }
  checkDriver(db, 'taskrow()');
  const database = db as unknown as DrizzleDatabase;
  if (mysql2ClientClosed(database.$client)) {
    throw new InvalidArgumentError('INVALID_CLIENT', '@taskrow/drizzle was given a Drizzle database whose mysql2 pool or connection has been ended');
  }
  return database;
}

/** Checks what `in()` was given: a Drizzle mysql2 transaction. */
function checkTransaction(tx: unknown): DrizzleExecutor {
  if (!is(tx, MySqlTransaction)) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/drizzle in() expected a Drizzle transaction (the \`tx\` of db.transaction()), got ${is(tx, MySqlDatabase) ? 'a Drizzle database' : describe(tx)}`,
    );
  }
  checkDriver(tx, 'in()');
  return tx as unknown as DrizzleExecutor;
}

/**
 * Connects taskrow to a Drizzle database over mysql2 (`drizzle(pool)` from `drizzle-orm/mysql2`)
 * that the application owns; taskrow never ends its pool. Resolves once the server's version is
 * known; rejects with `UNSUPPORTED_SERVER` on servers without SKIP LOCKED, and with
 * `INVALID_CLIENT` when `db` is not an open Drizzle mysql2 database (a query, a transaction,
 * another dialect or driver, a database whose pool was ended).
 *
 * `tr.in(tx)` binds taskrow to the application's Drizzle transaction: writes made through it commit
 * or roll back with `tx`.
 */
export async function taskrow(db: DrizzleDatabase, options?: TaskrowOptions): Promise<Taskrow<DrizzleTransaction>> {
  const database = checkDatabase(db);
  return createTaskrow<DrizzleTransaction>({
    client: drizzleClient(database),
    joinTransaction: (tx) => drizzleTransactionClient(checkTransaction(tx)),
    options,
    closedClient: 'a Drizzle database whose mysql2 pool or connection has been ended',
  });
}
