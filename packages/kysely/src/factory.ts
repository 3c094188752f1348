import type { Kysely, Transaction } from 'kysely';
import { createTaskrow, InvalidArgumentError, type Taskrow, type TaskrowOptions } from '@taskrow/core';
import { kyselyClient } from './client.js';

// biome-ignore lint/suspicious/noExplicitAny: any database type is accepted
type AnyKysely = Kysely<any>;
// biome-ignore lint/suspicious/noExplicitAny: any database type is accepted
type AnyTransaction = Transaction<any>;

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== 'object') return typeof value;
  const o = value as Record<string, unknown>;
  if (typeof o['compile'] === 'function') return 'a Kysely query builder (pass the Kysely instance, not a query)';
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'an object';
}

/** A Kysely instance or transaction: it executes compiled queries and opens transactions. */
function isKysely(value: unknown): value is AnyKysely {
  const o = value as Record<string, unknown> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o['executeQuery'] === 'function' &&
    typeof o['withoutPlugins'] === 'function' &&
    typeof o['isTransaction'] === 'boolean'
  );
}

/** MySQL's query compiler quotes identifiers with backticks; every other dialect's does not. */
function checkDialect(db: AnyKysely, what: string): void {
  const compiled = db.selectFrom('taskrow_dialect_check').selectAll().compile().sql;
  if (!compiled.includes('`taskrow_dialect_check`')) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/kysely ${what} expected a Kysely instance with a MySQL dialect (MysqlDialect), got one that compiles ${JSON.stringify(compiled)}`,
    );
  }
}

function checkInstance(input: unknown): AnyKysely {
  if (!isKysely(input)) throw new InvalidArgumentError('INVALID_CLIENT', `@taskrow/kysely expected a Kysely instance, got ${describe(input)}`);
  if (input.isTransaction) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      '@taskrow/kysely taskrow() expected a Kysely instance, got a Kysely transaction: bind a transaction with tr.in(trx)',
    );
  }
  checkDialect(input, 'taskrow()');
  return input;
}

function checkTransaction(tx: unknown): AnyTransaction {
  if (!isKysely(tx) || !tx.isTransaction) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/kysely in() expected a Kysely Transaction (the \`trx\` of db.transaction().execute()), got ${isKysely(tx) ? 'a Kysely instance' : describe(tx)}`,
    );
  }
  const controlled = tx as unknown as { isCommitted?: unknown; isRolledBack?: unknown };
  if (controlled.isCommitted === true || controlled.isRolledBack === true) {
    throw new InvalidArgumentError('INVALID_CLIENT', '@taskrow/kysely in() was given a Kysely transaction that has already committed or rolled back');
  }
  checkDialect(tx, 'in()');
  return tx as AnyTransaction;
}

/**
 * Connects taskrow to a Kysely instance (MysqlDialect) the application owns; taskrow never
 * destroys it. Resolves once the server's version is known; rejects with `UNSUPPORTED_SERVER` on
 * servers without SKIP LOCKED, and with `INVALID_CLIENT` when `db` is not an open Kysely instance
 * with a MySQL dialect (a query builder, a transaction, another dialect, a destroyed instance).
 *
 * `tr.in(trx)` binds taskrow to the application's Kysely `Transaction` (or
 * `ControlledTransaction`): writes made through it commit or roll back with `trx`.
 */
// biome-ignore lint/suspicious/noExplicitAny: any database type is accepted
export async function taskrow(db: Kysely<any>, options?: TaskrowOptions): Promise<Taskrow<Transaction<any>>> {
  const instance = checkInstance(db);
  return createTaskrow<AnyTransaction>({
    client: kyselyClient(instance),
    joinTransaction: (tx) => kyselyClient(checkTransaction(tx), true),
    options,
    closedClient: 'a Kysely instance that has been destroyed (or whose pool was ended)',
  });
}
