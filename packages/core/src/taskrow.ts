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
import { createResources } from './resources/resources.js';
import { resourcesTables } from './resources/tables.js';
import type { Resources, ResourcesOptions } from './resources/types.js';
import { createLoop, openLoop } from './loop/loop.js';
import { loopSchemaSql } from './loop/registry.js';
import type { CreateLoopOptions, Loop, LoopIdOf, LoopIdType, LoopOptions } from './loop/types.js';
import { createInspect } from './inspect/inspect.js';
import type { Inspect } from './inspect/types.js';
import { createQueue } from './queue/queue.js';
import { queueTables } from './queue/tables.js';
import type { Queue, QueueOptions } from './queue/types.js';

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
   * jobs.py's input/output locks and flow history (keys are global under the table prefix). Locks
   * can only be taken outside `in(tx)`; the admin writes (`produce`, `forceRelease`) join it.
   */
  resources(options?: ResourcesOptions): Resources;
  /**
   * The task loop `name` (doloop), created earlier with `createLoop`. Returns at once; the first
   * operation reads the loop's id type from the registry and rejects with `NOT_FOUND` when the loop
   * does not exist. MUST NOT create anything. Invalid names throw `INVALID_NAME` here, an invalid
   * `idType` `INVALID_ARGUMENT`.
   */
  loop<T extends LoopIdType = LoopIdType>(name: string, options?: LoopOptions<T>): Loop<LoopIdOf<T>>;
  /**
   * Creates the task loop `name` (table `<prefix>loop_<name>`) with id type `idType` (default
   * `'int'`) and records it; idempotent. Rejects with `INVALID_ARGUMENT` when the loop exists with
   * another id type, and inside `in(tx)` (CREATE TABLE would commit the application's transaction).
   */
  createLoop<T extends LoopIdType = 'int'>(name: string, options?: CreateLoopOptions<T>): Promise<Loop<LoopIdOf<T>>>;
  /** The DDL `createLoop` applies (doloop's `create-doloop-table`), for review or for applying by hand. */
  loopSchemaSql(name: string, options?: CreateLoopOptions): string;
  /**
   * The job queue `name` (validated: see `validateName`). Every queue shares one jobs table; a
   * queue exists as soon as a job is enqueued. Inside `in(tx)` enqueues and acks commit or roll
   * back with the application's transaction.
   */
  queue<Payload = unknown>(name: string, options?: QueueOptions): Queue<Payload>;
  /**
   * The same taskrow bound to the application's open transaction `tx`: its writes commit or roll
   * back with that transaction, and nothing is retried inside it (the application decides).
   */
  in(tx: Tx): Taskrow<Tx>;
  /**
   * Read-only views across every queue, loop and Dones namespace (for dashboards and metrics):
   * bounded statements, each an index range read. MUST NOT lock or write anything.
   */
  inspect(): Inspect;
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
    resources: (options) => createResources(exec, resourcesTables(prefix), options),
    loop: <T extends LoopIdType>(name: string, options?: LoopOptions<T>) => openLoop(exec, prefix, name, options) as unknown as Loop<LoopIdOf<T>>,
    createLoop: async <T extends LoopIdType>(name: string, options?: CreateLoopOptions<T>) =>
      (await createLoop(exec, prefix, name, options)) as unknown as Loop<LoopIdOf<T>>,
    loopSchemaSql: (name, options) => loopSchemaSql(prefix, name, options?.idType),
    queue: <P>(name: string, options?: QueueOptions) => createQueue<P>(exec, queueTables(prefix), name, options),
    in: (tx) => build(setup, setup.joinTransaction(tx), dialect, prefix, retry),
    inspect: () => createInspect(exec, prefix),
    purgeCleared: () => purgeRetired(exec, dt),
    close: () => background.settle(),
  };
}
