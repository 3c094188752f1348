import type { ColumnType, Generated } from 'kysely';

/**
 * Row types of taskrow's tables, for type-safe reads with Kysely (`Kysely<TaskrowDatabase>`). The
 * shapes are what mysql2 returns with its defaults: integers as numbers, binary columns as
 * Buffers, DATETIME(6) as Date. taskrow stores every time in UTC: read them with mysql2's
 * `timezone: 'Z'` (or `dateStrings: true`), or the Dates are off by the process's UTC offset.
 * taskrow's tables belong to taskrow: read them freely, write them only through taskrow.
 */

/** A DATETIME(6) column holding UTC. */
export type UtcDateTime = ColumnType<Date, Date | string, Date | string>;

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: UtcDateTime;
  /** The oldest schema version a build must know to use this schema. */
  min_build: ColumnType<number, number | undefined, number>;
}

/** Dones: namespace name -> current generation. */
export interface DonesNsTable {
  name: string;
  gen: number;
  created_at: UtcDateTime;
}

/** Dones: generations; a retired one waits for the purge. */
export interface DonesGenTable {
  gen: Generated<number>;
  ns: string;
  retired_at: UtcDateTime | null;
}

/** Dones: one row per done key. `k` is the key's UTF-8 bytes (or, past 2,999 bytes, a prefix and digest; then `k_long` holds the key). */
export interface DonesTable {
  gen: number;
  k: Buffer;
  k_long: Buffer | null;
  marked_at: UtcDateTime;
}

/** Loop: the registry of loops and their id types. */
export interface LoopsTable {
  name: string;
  id_type: string;
  created_at: UtcDateTime;
}

/** One loop's table (`<prefix>loop_<name>`); `Id` is number for int/bigint loops, string for string(N) loops. Times are unix seconds. */
export interface LoopTable<Id extends number | string = number | string> {
  id: Id;
  last_updated: number | null;
  lock_until: number | null;
}

/** Queue: every job of every queue. `phase`: 0 ready, 1 delayed, 2 running, 3 done, 4 dead, 5 blocked. `payload` is JSON text. */
export interface QueueJobsTable {
  id: Generated<number>;
  queue: string;
  grp: Generated<string>;
  phase: number;
  priority: Generated<number>;
  ready_priority: Generated<number>;
  due_at: UtcDateTime;
  run_at: UtcDateTime;
  attempt: Generated<number>;
  max_attempts: number;
  /** The fencing token of the job's last claim (`Job.token`). */
  token: number;
  dedup_k: Buffer | null;
  payload: string;
  last_error: string | null;
  created_at: UtcDateTime;
  finished_at: UtcDateTime | null;
  /** JSON text: what the job returned (kept finished jobs). */
  result: string | null;
  /** JSON text: the last progress() value. */
  progress: string | null;
  /** The concurrency key given at enqueue, or null. */
  conc_key: string | null;
}

/** Queue: one row per concurrency key in use; `conc_key` '' holds the queue's default limit. */
export interface QueueKeysTable {
  queue: string;
  conc_key: string;
  /** Most ready and running jobs of the key; null: the queue default (1 when none). */
  max_running: number | null;
  /** Written by every admission of the key's jobs. */
  admissions: Generated<number>;
}

/** Queue: one row per queue with fleet-wide state. */
export interface QueuesTable {
  queue: string;
  /** Set while the queue is paused. */
  paused_at: UtcDateTime | null;
  /** When a claim last took the turn to read the queue's ready rows from the head. */
  head_read_at: UtcDateTime | null;
}

/** Queue: one row per start a rate-limited queue allows per window. */
export interface QueueRateSlotsTable {
  queue: string;
  slot: number;
  window_us: number;
  /** When the slot may serve another start. */
  free_at: UtcDateTime;
}

/** Queue: where the last claim of a queue that held its claim lock ended its read (NULL: it found fewer jobs than it asked for). */
export interface QueueCursorsTable {
  queue: string;
  priority: number | null;
  /** The due time of the last row read, in microseconds since 1970 (UTC). */
  due_us: number | null;
}

/** Queue: the doorbell's guard rows (`conn` 0); sleepers' registrations are never committed, so never read here. */
export interface QueueSleepersTable {
  queue: string;
  conn: number;
  rings: Generated<number>;
  /** A registration's fencing token a ring may lease a job to (0 on guard rows). */
  token: Generated<number>;
  /** A registration's lease (microseconds) of a job leased to it (0 on guard rows). */
  lease_us: Generated<number>;
}

/** Queue: recurring schedules (`taskrow.schedules()`), one row each. */
export interface QueueSchedulesTable {
  name: string;
  queue: string;
  cron: string | null;
  tz: string | null;
  every_s: number | null;
  anchor_at: UtcDateTime;
  /** JSON text of each job's payload. */
  payload: string;
  /** JSON text of each job's enqueue options. */
  options: string;
  missed: 'skip' | 'once' | 'each';
  missed_max: number;
  /** The next tick without a job; null: no further tick. */
  next_at: UtcDateTime | null;
  last_at: UtcDateTime | null;
  rev: number;
  created_at: UtcDateTime;
  updated_at: UtcDateTime;
}

/** Resources: every key by digest `h`; `k` is the key's UTF-8 bytes. */
export interface ResourcesTable {
  h: Buffer;
  k: Buffer;
  produced_at: UtcDateTime | null;
  expires_at: UtcDateTime | null;
  produced_by: Buffer | null;
  /** Bumped by every transaction that locks the row (schema version 13), so clusters certify the lock. */
  lock_seq: Generated<number>;
}

/** Resources: the locks jobs hold on keys. */
export interface ResourceLocksTable {
  h: Buffer;
  holder: Buffer;
  mode: 'reader' | 'writer';
  lease_until: UtcDateTime;
}

/** Resources: running jobs. */
export interface ResourceJobsTable {
  holder: Buffer;
  job: Buffer;
  owner: string;
  acquired_at: UtcDateTime;
  lease_until: UtcDateTime;
}

/** Resources: the history graph (input: key -> job; output: job -> key). */
export interface ResourceEdgesTable {
  src_h: Buffer;
  dst_h: Buffer;
  kind: 'input' | 'output';
  src: Buffer;
  dst: Buffer;
  last_seen: UtcDateTime;
}

/** Receipts of writes whose reply may be lost: what an enqueue or a Loop `get` returned, by token. */
export interface ReceiptsTable {
  token: Buffer;
  made_at: UtcDateTime;
  result: string;
}

/** Queue: the dedup keys of dead jobs, kept for `retryDead()`. */
export interface QueueDeadKeysTable {
  id: number;
  dedup_k: Buffer;
}

/** Queue: one row per dedup key, naming the job that took it last (it holds the key while its `dedup_k` equals it). */
export interface QueueDedupTable {
  queue: string;
  dedup_k: Buffer;
  id: number;
  met: number;
}

/** Queue: one row per keyed job admitted (`state` 0: ready or running) or blocked (`state` 5); its job's row says whether it still holds or waits. */
export interface QueueKeyedTable {
  queue: string;
  conc_key: string;
  state: number;
  id: number;
}

/** Every table `migrate()` creates, by name without the prefix. */
export interface TaskrowTables {
  schema_migrations: SchemaMigrationsTable;
  dones_ns: DonesNsTable;
  dones_gen: DonesGenTable;
  dones: DonesTable;
  loops: LoopsTable;
  queue_jobs: QueueJobsTable;
  resources: ResourcesTable;
  resource_locks: ResourceLocksTable;
  resource_jobs: ResourceJobsTable;
  resource_edges: ResourceEdgesTable;
  receipts: ReceiptsTable;
  queue_dead_keys: QueueDeadKeysTable;
  queue_dedup: QueueDedupTable;
  queues: QueuesTable;
  queue_keys: QueueKeysTable;
  queue_keyed: QueueKeyedTable;
  queue_rate_slots: QueueRateSlotsTable;
  queue_schedules: QueueSchedulesTable;
  queue_sleepers: QueueSleepersTable;
  queue_cursors: QueueCursorsTable;
}

/** taskrow's tables under prefix `P`: `Kysely<TaskrowDatabase>` (default prefix) or `Kysely<MyDb & TaskrowDatabase<'jobs_'>>`. */
export type TaskrowDatabase<P extends string = 'taskrow_'> = { [K in keyof TaskrowTables as `${P}${K}`]: TaskrowTables[K] };

/** The tables of loops `Names` under prefix `P`, each with its id type: `TaskrowLoopTables<'taskrow_', 'crawl'>`. */
export type TaskrowLoopTables<P extends string = 'taskrow_', Names extends string = string, Id extends number | string = number | string> = {
  [N in Names as `${P}loop_${N}`]: LoopTable<Id>;
};

/**
 * The columns of every table in `TaskrowTables`, in DDL order, for code (and the tests that keep
 * these types equal to core's DDL) that needs them at run time. The compiler checks that this
 * list and the interfaces above name the same columns.
 */
export const TASKROW_COLUMNS = {
  schema_migrations: ['version', 'name', 'applied_at', 'min_build'],
  dones_ns: ['name', 'gen', 'created_at'],
  dones_gen: ['gen', 'ns', 'retired_at'],
  dones: ['gen', 'k', 'k_long', 'marked_at'],
  loops: ['name', 'id_type', 'created_at'],
  queue_jobs: [
    'id',
    'queue',
    'grp',
    'phase',
    'priority',
    'ready_priority',
    'due_at',
    'run_at',
    'attempt',
    'max_attempts',
    'token',
    'dedup_k',
    'payload',
    'last_error',
    'created_at',
    'finished_at',
    'result',
    'progress',
    'conc_key',
  ],
  resources: ['h', 'k', 'produced_at', 'expires_at', 'produced_by', 'lock_seq'],
  resource_locks: ['h', 'holder', 'mode', 'lease_until'],
  resource_jobs: ['holder', 'job', 'owner', 'acquired_at', 'lease_until'],
  resource_edges: ['src_h', 'dst_h', 'kind', 'src', 'dst', 'last_seen'],
  receipts: ['token', 'made_at', 'result'],
  queue_dead_keys: ['id', 'dedup_k'],
  queue_dedup: ['queue', 'dedup_k', 'id', 'met'],
  queues: ['queue', 'paused_at', 'head_read_at'],
  queue_keys: ['queue', 'conc_key', 'max_running', 'admissions'],
  queue_keyed: ['queue', 'conc_key', 'state', 'id'],
  queue_rate_slots: ['queue', 'slot', 'window_us', 'free_at'],
  queue_schedules: [
    'name',
    'queue',
    'cron',
    'tz',
    'every_s',
    'anchor_at',
    'payload',
    'options',
    'missed',
    'missed_max',
    'next_at',
    'last_at',
    'rev',
    'created_at',
    'updated_at',
  ],
  queue_sleepers: ['queue', 'conn', 'rings', 'token', 'lease_us'],
  queue_cursors: ['queue', 'priority', 'due_us'],
} as const satisfies { readonly [T in keyof TaskrowTables]: readonly (keyof TaskrowTables[T])[] };

/** The columns of one loop table, in DDL order. */
export const LOOP_TABLE_COLUMNS = ['id', 'last_updated', 'lock_until'] as const satisfies readonly (keyof LoopTable)[];

// Compile-time: every interface column is listed (the `satisfies` above checks the other direction).
type Unlisted = { [T in keyof TaskrowTables]: Exclude<keyof TaskrowTables[T], (typeof TASKROW_COLUMNS)[T][number]> }[keyof TaskrowTables];
type LoopUnlisted = Exclude<keyof LoopTable, (typeof LOOP_TABLE_COLUMNS)[number]>;
const everyColumnListed: [Unlisted | LoopUnlisted] extends [never] ? true : Unlisted | LoopUnlisted = true;
void everyColumnListed;
