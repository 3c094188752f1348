import { resolveDialect, type Dialect } from './dialect.js';
import { InvalidArgumentError, isClientClosed } from './errors.js';
import { createDones } from './dones/dones.js';
import { backgroundWork, purgeRetired } from './dones/purge.js';
import type { Dones } from './dones/types.js';
import { DEFAULT_STATEMENT_TIMEOUT_MS, Executor } from './engine/executor.js';
import { InstanceState } from './instance.js';
import { validatePrefix } from './names.js';
import type { SqlClient } from './port.js';
import { DEFAULT_RETRY, type RetryOptions } from './retry.js';
import { intArg, msArg, optionsOf } from './validate.js';
import { migrate, schemaSql, type MigrateResult } from './schema/migrate.js';
import { checkSchemaCompat } from './schema/compat.js';
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
import { queueTables } from './queue/model/tables.js';
import type { QueueOptions } from './queue/model/types.js';
import type { Queue } from './queue/model/queue.js';
import { createSchedules } from './schedule/schedules.js';
import { schedulesTable } from './schedule/schema.js';
import type { Schedules } from './schedule/types.js';
import { doctor, type DoctorReport } from './doctor/index.js';

/** Options every adapter factory accepts. */
export interface TaskrowOptions {
  /** Prefix of every table taskrow creates. Default `taskrow_`. */
  readonly prefix?: string;
  /** Retry of whole operations on deadlock, lock wait timeout and lost connection. */
  readonly retry?: Partial<RetryOptions>;
  /**
   * Milliseconds taskrow waits for the answer to one statement (or one transaction attempt)
   * before it abandons it, destroys its connection where the adapter can, and retries it as a lost
   * connection; 10 to 3,600,000, default 30,000. Where a lease is held (heartbeats, refreshes) the bound
   * is the time left on the lease instead, when shorter.
   */
  readonly statementTimeout?: number;
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
   * The Queue's recurring schedules (cron patterns and intervals): each tick enqueues exactly one
   * job, however many schedulers run. Inside `in(tx)` upserts and removals join the transaction.
   */
  schedules(): Schedules;
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
  /**
   * Checks the server and the schema under the prefix for what taskrow needs: version, privileges,
   * stored procedures, binary log, isolation, timeouts, connections, clock, a proxy in the way of
   * the doorbell, schema version, purge lag and table sizes; one `DoctorCheck` each, with its fix.
   * Read-only: MUST NOT write, create or drop anything (its only statement besides reads is a
   * `KILL QUERY` of its own sleeping connection). Each statement is bounded by 5 s. A failed check is
   * reported, never thrown; it rejects only when the connection is dead. On a view bound by
   * `in(tx)` it runs on the instance's own client, outside that transaction.
   */
  doctor(): Promise<DoctorReport>;
  /** Purges the rows of namespaces cleared with `purge: 'none'` or whose purge was interrupted. */
  purgeCleared(): Promise<number>;
  /**
   * Shuts this instance down in one call. First it stops every worker (`queue.work()`) and
   * scheduler (`schedules().start()`) it started, all together, as their own `stop()` does: no new
   * claims, unstarted jobs given back, running handlers given `timeout` milliseconds (default 30,000) to
   * finish, then aborted and given back. Then it waits for background work (purges) and releases
   * what it keeps in memory: kept connections go back to the pool and timers end. It never closes
   * the application's client: end your pool after it. MUST NOT reject. A handle used after
   * `close()` still works, keeping nothing between calls until it is used again. On a view bound by
   * `in(tx)` it waits for that view's background work only.
   */
  close(options?: { readonly timeout?: number }): Promise<void>;
}

/** What an adapter hands to `createTaskrow`. */
export interface TaskrowSetup<Tx> {
  readonly client: SqlClient;
  /** Wraps the application's transaction object as a joined `SqlClient`. */
  readonly joinTransaction: (tx: Tx) => SqlClient;
  readonly options?: TaskrowOptions;
  /**
   * What the application passed, as the message of an ended client should name it (`a Knex
   * instance that has been destroyed`): a client found closed while connecting is refused with
   * `INVALID_CLIENT`, `@taskrow/<adapter> was given <closedClient>`.
   */
  readonly closedClient?: string;
}

/**
 * Connects taskrow to a client: resolves the dialect once (`SELECT VERSION()`), and rejects with
 * `UNSUPPORTED_SERVER` naming the version when the server has no SKIP LOCKED, with
 * `INVALID_CLIENT` when the client was already ended (`closedClient`), and with `SCHEMA_TOO_NEW`
 * when a newer build migrated the schema in a way this build cannot use (`checkSchemaCompat`).
 */
export async function createTaskrow<Tx>(setup: TaskrowSetup<Tx>): Promise<Taskrow<Tx>> {
  const o = optionsOf('taskrow()', setup.options, ['prefix', 'retry', 'statementTimeout']) as TaskrowOptions;
  const prefix = validatePrefix(o.prefix ?? 'taskrow_');
  const retry = retryOptions(o.retry);
  const timeoutMs = msArg('taskrow() statementTimeout', o.statementTimeout ?? DEFAULT_STATEMENT_TIMEOUT_MS, 10, 3_600_000);
  // The dialect is not known yet: its one statement is retried and bounded like any other.
  const connecting = new Executor(setup.client, undefined as unknown as Dialect, retry, timeoutMs);
  const dialect = await resolveDialect({ query: (sql, params) => connecting.query(sql, params) }).catch((err: unknown) => {
    if (setup.closedClient === undefined || !isClientClosed(err)) throw err;
    throw new InvalidArgumentError('INVALID_CLIENT', `@taskrow/${setup.client.adapter} was given ${setup.closedClient}`);
  });
  const exec = new Executor(setup.client, dialect, retry, timeoutMs, setup.client, new InstanceState());
  await checkSchemaCompat(exec, prefix);
  return build(setup, setup.client, exec, prefix);
}

function retryOptions(partial: Partial<RetryOptions> | undefined): RetryOptions {
  const o = optionsOf('taskrow() retry', partial, ['attempts', 'baseDelayMs', 'maxDelayMs']) as Partial<RetryOptions>;
  return {
    attempts: intArg('taskrow() retry.attempts', o.attempts ?? DEFAULT_RETRY.attempts, 1, 100),
    baseDelayMs: msArg('taskrow() retry.baseDelayMs', o.baseDelayMs ?? DEFAULT_RETRY.baseDelayMs, 0, 60_000),
    maxDelayMs: msArg('taskrow() retry.maxDelayMs', o.maxDelayMs ?? DEFAULT_RETRY.maxDelayMs, 0, 60_000),
  };
}

function build<Tx>(setup: TaskrowSetup<Tx>, client: SqlClient, base: Executor, prefix: string): Taskrow<Tx> {
  const exec = client === base.client ? base : new Executor(client, base.dialect, base.retry, base.timeoutMs, client, base.state);
  const { dialect } = exec;
  const dt = donesTables(prefix);
  const background = backgroundWork();
  const knownNamespaces = new Set<string>();
  return {
    dialect,
    prefix,
    migrate: () => migrate(exec, prefix),
    schemaSql: () => schemaSql(prefix, dialect.engine),
    dones: (namespace) => createDones(exec, dt, namespace, background, knownNamespaces),
    resources: (options) => createResources(exec, resourcesTables(prefix), options),
    loop: <T extends LoopIdType>(name: string, options?: LoopOptions<T>) => openLoop(exec, prefix, name, options) as unknown as Loop<LoopIdOf<T>>,
    createLoop: async <T extends LoopIdType>(name: string, options?: CreateLoopOptions<T>) =>
      (await createLoop(exec, prefix, name, options)) as unknown as Loop<LoopIdOf<T>>,
    loopSchemaSql: (name, options) => loopSchemaSql(prefix, name, options?.idType),
    queue: <P>(name: string, options?: QueueOptions) => createQueue<P>(exec, queueTables(prefix), name, options),
    schedules: () => createSchedules(exec, schedulesTable(prefix), queueTables(prefix)),
    in: (tx) => build(setup, setup.joinTransaction(tx), exec, prefix),
    inspect: () => createInspect(exec, prefix),
    doctor: () => doctor(base, prefix),
    purgeCleared: () => purgeRetired(exec, dt),
    close: async (options) => {
      const o = optionsOf('close()', options, ['timeout']);
      const timeoutMs = msArg('close() timeout', o['timeout'] ?? 30_000, 0, 24 * 3600 * 1000);
      if (exec === base) await exec.state.stopAll(timeoutMs); // a view bound by in(tx) leaves the instance alone
      await background.settle();
      if (exec === base) await exec.state.close();
    },
  };
}
