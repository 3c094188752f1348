import { resolveDialect, type Dialect } from './dialect.js';
import { createDones } from './dones/dones.js';
import { backgroundWork, purgeRetired } from './dones/purge.js';
import type { Dones } from './dones/types.js';
import { Executor } from './engine/executor.js';
import { InvalidArgumentError } from './errors.js';
import { validatePrefix } from './names.js';
import type { SqlClient } from './port.js';
import { DEFAULT_RETRY, withRetry, type RetryOptions } from './retry.js';
import { migrate, schemaSql, type MigrateResult } from './schema/migrate.js';
import { donesTables } from './dones/tables.js';

/** Options every adapter factory accepts. */
export interface TaskrowOptions {
  /** Prefix of every table taskrow creates. Default `taskrow_`. */
  readonly prefix?: string;
  /** Retry of whole operations on deadlock, lock wait timeout and lost connection. */
  readonly retry?: Partial<RetryOptions>;
}

/**
 * taskrow over one database client. `Tx` is the adapter's transaction type (a mysql2 connection,
 * a Knex transaction, ...) accepted by `in()`.
 */
export interface Taskrow<Tx = unknown> {
  /** What the server can do, resolved once at connect time. */
  readonly dialect: Dialect;
  readonly prefix: string;
  /** Creates or upgrades taskrow's tables; idempotent and safe to run from many processes at once. */
  migrate(): Promise<MigrateResult>;
  /** The DDL `migrate()` applies, for review or for applying by hand. */
  schemaSql(): string;
  /** The done-keys of one namespace (validated: see `validateName`). */
  dones(namespace: string): Dones;
  /**
   * The same taskrow bound to the application's open transaction `tx`: its writes commit or roll
   * back with that transaction, and nothing is retried inside it (the application decides).
   */
  in(tx: Tx): Taskrow<Tx>;
  /** Purges the rows of namespaces cleared with `purge: 'none'` or whose purge was interrupted. */
  purgeCleared(): Promise<number>;
  /** Waits for background work (purges) to finish. MUST NOT close the application's client. */
  close(): Promise<void>;
}

/** What an adapter hands to `createTaskrow`. */
export interface TaskrowSetup<Tx> {
  readonly client: SqlClient;
  /** Wraps the application's transaction object as a joined `SqlClient`. */
  readonly joinTransaction: (tx: Tx) => SqlClient;
  readonly options?: TaskrowOptions;
}

/**
 * Connects taskrow to a client: resolves the dialect once (`SELECT VERSION()`), and rejects with
 * `UNSUPPORTED_SERVER` naming the version when the server has no SKIP LOCKED.
 */
export async function createTaskrow<Tx>(setup: TaskrowSetup<Tx>): Promise<Taskrow<Tx>> {
  const prefix = validatePrefix(setup.options?.prefix ?? 'taskrow_');
  const retry = retryOptions(setup.options?.retry);
  const dialect = await withRetry(setup.client, retry, () => resolveDialect(setup.client));
  return build(setup, setup.client, dialect, prefix, retry);
}

function retryOptions(partial: Partial<RetryOptions> | undefined): RetryOptions {
  const r = { ...DEFAULT_RETRY, ...partial };
  if (!Number.isInteger(r.attempts) || r.attempts < 1 || r.attempts > 100) {
    throw new InvalidArgumentError('INVALID_ARGUMENT', `retry.attempts must be an integer from 1 to 100, got ${String(r.attempts)}`);
  }
  for (const k of ['baseDelayMs', 'maxDelayMs'] as const) {
    if (!Number.isFinite(r[k]) || r[k] < 0 || r[k] > 60_000) {
      throw new InvalidArgumentError('INVALID_ARGUMENT', `retry.${k} must be from 0 to 60000 ms, got ${String(r[k])}`);
    }
  }
  return r;
}

function build<Tx>(setup: TaskrowSetup<Tx>, client: SqlClient, dialect: Dialect, prefix: string, retry: RetryOptions): Taskrow<Tx> {
  const exec = new Executor(client, dialect, retry);
  const dt = donesTables(prefix);
  const background = backgroundWork();
  return {
    dialect,
    prefix,
    migrate: () => migrate(exec, prefix),
    schemaSql: () => schemaSql(prefix),
    dones: (namespace) => createDones(exec, dt, namespace, background),
    in: (tx) => build(setup, setup.joinTransaction(tx), dialect, prefix, retry),
    purgeCleared: () => purgeRetired(exec, dt),
    close: () => background.settle(),
  };
}
