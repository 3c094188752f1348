import type { Knex } from 'knex';
import { createTaskrow, InvalidArgumentError, type Taskrow, type TaskrowOptions } from '@taskrow/core';
import { knexClient } from './client.js';

type Shape = Record<string, unknown> & { client?: { driverName?: unknown; pool?: unknown } };

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return 'a function that is not a Knex instance';
  if (typeof value !== 'object') return typeof value;
  const o = value as Shape;
  if (typeof o['toSQL'] === 'function') return 'a Knex query builder (pass the Knex instance, `knex`, not `knex(table)`)';
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'an object';
}

/** A Knex instance or transaction: a callable with `raw`, `transaction` and a client. */
function isKnex(value: unknown): value is Knex {
  const o = value as Shape;
  return typeof value === 'function' && typeof o['raw'] === 'function' && typeof o['transaction'] === 'function' && typeof o.client === 'object';
}

function checkDriver(db: Knex, what: string): void {
  const driver = (db as unknown as Shape).client?.driverName;
  if (driver !== 'mysql2') {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/knex ${what} expected a Knex instance with client "mysql2", got client ${JSON.stringify(driver)}`,
    );
  }
}

/** Checks what `taskrow()` was given: an open Knex instance over mysql2, not a transaction. */
function checkInstance(input: unknown): Knex {
  if (!isKnex(input)) throw new InvalidArgumentError('INVALID_CLIENT', `@taskrow/knex expected a Knex instance, got ${describe(input)}`);
  if ((input as { isTransaction?: unknown }).isTransaction === true) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      '@taskrow/knex taskrow() expected a Knex instance, got a Knex transaction: bind a transaction with tr.in(trx)',
    );
  }
  checkDriver(input, 'taskrow()');
  if (!(input as unknown as Shape).client?.pool) {
    throw new InvalidArgumentError('INVALID_CLIENT', '@taskrow/knex was given a Knex instance that has been destroyed (it has no pool)');
  }
  return input;
}

/** Checks what `in()` was given: an open Knex transaction. */
function checkTransaction(tx: unknown): Knex.Transaction {
  if (!isKnex(tx) || (tx as { isTransaction?: unknown }).isTransaction !== true) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/knex in() expected a Knex transaction (the \`trx\` of knex.transaction()), got ${isKnex(tx) ? 'a Knex instance' : describe(tx)}`,
    );
  }
  checkDriver(tx, 'in()');
  if ((tx as Knex.Transaction).isCompleted()) {
    throw new InvalidArgumentError('INVALID_CLIENT', '@taskrow/knex in() was given a Knex transaction that has already committed or rolled back');
  }
  return tx as Knex.Transaction;
}

/**
 * Connects taskrow to a Knex instance (client `mysql2`) the application owns; taskrow never
 * destroys it. Resolves once the server's version is known; rejects with `UNSUPPORTED_SERVER` on
 * servers without SKIP LOCKED, and with `INVALID_CLIENT` when `knex` is not an open Knex instance
 * over mysql2 (a query builder, a transaction, another dialect, a destroyed instance).
 *
 * `tr.in(trx)` binds taskrow to the application's `Knex.Transaction`: writes made through it
 * commit or roll back with `trx`.
 */
export async function taskrow(knex: Knex, options?: TaskrowOptions): Promise<Taskrow<Knex.Transaction>> {
  const db = checkInstance(knex);
  return createTaskrow<Knex.Transaction>({
    client: knexClient(db),
    joinTransaction: (tx) => knexClient(checkTransaction(tx), true),
    options,
    closedClient: 'a Knex instance that has been destroyed',
  });
}
