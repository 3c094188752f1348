import { createTaskrow, InvalidArgumentError, type Taskrow, type TaskrowOptions } from '@taskrow/core';
import { typeormClient, typeormTransactionClient, type TypeormDataSource, type TypeormTransaction } from './client.js';

type Shape = Record<string, unknown> & { queryRunner?: Record<string, unknown>; options?: { type?: unknown }; dataSource?: Shape };

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== 'object') return typeof value;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'an object';
}

/** A DataSource: it has `options`, `manager`, `createQueryRunner` and `isInitialized`. */
function isDataSource(value: unknown): value is TypeormDataSource {
  const o = value as Shape | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    typeof o['createQueryRunner'] === 'function' &&
    typeof o['isInitialized'] === 'boolean' &&
    typeof o['manager'] === 'object' &&
    typeof o.options === 'object'
  );
}

/** A QueryRunner: it has `startTransaction` and `isTransactionActive`. */
const isQueryRunner = (o: Shape): boolean => typeof o['startTransaction'] === 'function' && typeof o['isTransactionActive'] === 'boolean';

/** An EntityManager: it has `transaction`, `query` and a `connection` / `dataSource`, but no `createQueryRunner` of its own. */
const isEntityManager = (o: Shape): boolean =>
  typeof o['transaction'] === 'function' && typeof o['query'] === 'function' && typeof o['getRepository'] === 'function';

function checkType(type: unknown, what: string): void {
  if (type !== 'mysql' && type !== 'mariadb') {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/typeorm ${what} expected a DataSource of type "mysql" or "mariadb", got type ${JSON.stringify(type)}`,
    );
  }
}

/** Checks what `taskrow()` was given: an initialized DataSource of type mysql or mariadb. */
function checkDataSource(input: unknown): TypeormDataSource {
  if (!isDataSource(input)) {
    const o = input as Shape | null;
    const hint =
      typeof o === 'object' && o !== null && (isQueryRunner(o) || isEntityManager(o))
        ? `a TypeORM ${isQueryRunner(o) ? 'QueryRunner' : 'EntityManager'} (pass the DataSource; bind a transaction with tr.in())`
        : describe(input);
    throw new InvalidArgumentError('INVALID_CLIENT', `@taskrow/typeorm expected a TypeORM DataSource, got ${hint}`);
  }
  checkType(input.options.type, 'taskrow()');
  if (!input.isInitialized) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      '@taskrow/typeorm was given a DataSource that is not initialized (call dataSource.initialize() first) or has been destroyed',
    );
  }
  return input;
}

/** Checks what `in()` was given: an EntityManager or QueryRunner inside an active transaction. */
function checkTransaction(tx: unknown): TypeormTransaction {
  const o = tx as Shape | null;
  if (typeof o !== 'object' || o === null || isDataSource(tx) || !(isQueryRunner(o) || isEntityManager(o))) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/typeorm in() expected the EntityManager of a transaction (the \`manager\` of dataSource.transaction()) or a QueryRunner after startTransaction(), got ${isDataSource(tx) ? 'a DataSource' : describe(tx)}`,
    );
  }
  const runner = isQueryRunner(o) ? o : o.queryRunner;
  const dataSource = (runner?.['dataSource'] ?? runner?.['connection'] ?? o['dataSource'] ?? o['connection']) as Shape | undefined;
  checkType(dataSource?.options?.type, 'in()');
  if (runner?.['isTransactionActive'] !== true || runner['isReleased'] === true) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/typeorm in() was given ${isQueryRunner(o) ? 'a QueryRunner' : 'an EntityManager'} outside an active transaction (the DataSource's own manager, a transaction already committed or rolled back, or a released QueryRunner)`,
    );
  }
  return o as unknown as TypeormTransaction;
}

/**
 * Connects taskrow to a TypeORM DataSource (type `mysql` or `mariadb`, both over mysql2) the
 * application owns and has initialized; taskrow never destroys it. Resolves once the server's
 * version is known; rejects with `UNSUPPORTED_SERVER` on servers without SKIP LOCKED, and with
 * `INVALID_CLIENT` when `dataSource` is not an initialized DataSource of those types (an
 * EntityManager, a QueryRunner, another type, a destroyed DataSource).
 *
 * `tr.in(tx)` binds taskrow to the application's transaction, an EntityManager inside
 * `dataSource.transaction()` or a QueryRunner after `startTransaction()`: writes made through it
 * commit or roll back with that transaction.
 */
export async function taskrow(dataSource: TypeormDataSource, options?: TaskrowOptions): Promise<Taskrow<TypeormTransaction>> {
  const ds = checkDataSource(dataSource);
  return createTaskrow<TypeormTransaction>({
    client: typeormClient(ds),
    joinTransaction: (tx) => typeormTransactionClient(checkTransaction(tx)),
    options,
  });
}
