import type { DottedName } from './names.js';

/** A key: an exact string (see `encodeKey`), or a name built with `dotted`. */
export type ResourceKey = string | DottedName;

/** Why a job cannot take its locks (jobs.py's reasons). */
export type UnavailableReason =
  /** The input was never produced, has expired, or a writer holds it. */
  | 'input_missing'
  /** The output exists and the job does not overwrite. */
  | 'output_exists'
  /** Another job writes the output. */
  | 'output_locked'
  /** Other jobs read the output. */
  | 'output_used';

/**
 * Why a held lock is no longer held (or, at `refresh()`, no longer valid as jobs.py sees it):
 * `input_lock_lost` also when the input no longer exists (expired or unproduced); `output_exists`
 * when a job that does not overwrite finds its output produced meanwhile.
 */
export type LostReason = 'input_lock_lost' | 'output_lock_lost' | 'output_exists';

/** One key and why it blocked the job, or why its lock was lost. */
export interface KeyReason<R extends string = UnavailableReason> {
  readonly key: string;
  readonly reason: R;
}

/** How a job takes its locks. Every field may be set on `job()` and overridden on `acquire()`. */
export interface AcquireOptions {
  /** Milliseconds each lock is leased for, by the database clock. Default 60,000. */
  readonly lease?: number;
  /** Milliseconds to keep retrying (about every 10 ms) while the keys are unavailable. Default 0: one try. */
  readonly wait?: number;
  /** Take outputs that already exist. Default true, as jobs.py. */
  readonly overwrite?: boolean;
  /** On a successful release, outputs stop existing after this many milliseconds. Default: never. */
  readonly outputTtl?: number | null;
  /** Refresh the lease in the background every `lease / 3` (at least every 100 ms). Default false. */
  readonly autoRefresh?: boolean;
}

/** A job's declared keys and defaults. */
export interface ResourceJobOptions extends AcquireOptions {
  readonly inputs?: Iterable<ResourceKey>;
  readonly outputs?: Iterable<ResourceKey>;
}

/** What `canRun()` found. */
export interface RunCheck {
  /** True when `acquire()` would succeed right now. */
  readonly ok: boolean;
  readonly reasons: readonly KeyReason[];
}

/** What `release()` does. */
export interface ReleaseOptions {
  /** A failed job releases its locks and does not mark its outputs as existing. Default false. */
  readonly failed?: boolean;
}

/**
 * One job: its inputs and outputs, and, between `acquire()` and `release()`, its locks. The locks
 * may be taken and released again any number of times; each acquisition gets a new `id`.
 */
export interface ResourceJob {
  /** The job name (recorded in the flow history, sanitized). */
  readonly name: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  /**
   * True between a successful `acquire()` and `release()` while the lease can be trusted: false
   * once the lease ended on the local clock or a refresh found a lock lost.
   */
  readonly held: boolean;
  /** Hex id of the current acquisition (the lock holder), undefined when not held. */
  readonly id: string | undefined;
  /**
   * Aborts (reason: a `ResourceLockLostError`, code `LEASE_LOST`) when a lock of the current
   * acquisition is found lost by a refresh, when the process shuts down, and when the lease ends
   * on the local monotonic clock: counted from when the last confirmed acquire or refresh was
   * sent, minus a margin of 10% of the lease (50 ms to 5 s), so it aborts before the database
   * can hand the keys to another job, whatever the network does. A new signal is made for each acquisition.
   */
  readonly signal: AbortSignal;
  /** Adds input keys. MUST throw once the locks are taken (add before `acquire()`). */
  addInputs(...keys: ResourceKey[]): this;
  /** Adds output keys. MUST throw once the locks are taken. */
  addOutputs(...keys: ResourceKey[]): this;
  /** Checks the rules without locking or writing anything. Throws while the job holds its locks. */
  canRun(options?: Pick<AcquireOptions, 'overwrite'>): Promise<RunCheck>;
  /**
   * Locks every input (shared) and output (exclusive) at once, all or nothing, retrying until
   * `wait` milliseconds pass; gives up at once when an output exists and `overwrite` is false. Rejects
   * with `ResourceUnavailableError` (code RESOURCE_UNAVAILABLE) carrying a reason per blocked key,
   * and then holds nothing. MUST NOT let two jobs write one key, or a job read a key another writes.
   */
  acquire(options?: AcquireOptions): Promise<this>;
  /**
   * Extends the lease of every lock, as jobs.py's `refresh()`: when any lock is lost (expired, or
   * removed by `forceRelease`), any input no longer exists, or (without `overwrite`) any output was
   * produced meanwhile, it extends nothing and resolves to those keys with their reasons; the job
   * then holds nothing it can trust (`held` false, `signal` aborted; `release()` frees the rest
   * and marks no output). Resolves to [] when every lease was extended. Bounded by the time left
   * on the lease: a refresh that gets no answer in time rejects, and the lease's end decides.
   */
  refresh(): Promise<readonly KeyReason<LostReason>[]>;
  /**
   * Releases every lock. Unless `failed`, marks the outputs as existing (expiring after
   * `outputTtl`), but only when every lock was still held: if any was lost, no output is marked
   * and it rejects with `ResourceLockLostError` (code LEASE_LOST) after releasing the rest.
   * After the lease ended on the local clock (see `signal`) it frees what is left, marks nothing,
   * and rejects with that `LEASE_LOST` error (unless `failed`).
   * MUST throw when nothing is held (released twice, or never acquired).
   */
  release(options?: ReleaseOptions): Promise<void>;
  /**
   * Acquires, runs `fn`, and releases: as failed when `fn` throws (rethrowing its error), as
   * succeeded otherwise. `signal` aborts if a lock is lost meanwhile.
   */
  run<T>(fn: (job: ResourceJob, signal: AbortSignal) => Promise<T> | T, options?: AcquireOptions): Promise<T>;
}

/** A job holding locks now (its lease has not passed). */
export interface RunningJob {
  /** The holder id (`ResourceJob.id`). */
  readonly id: string;
  readonly job: string;
  /** `host:pid` of the process that acquired. */
  readonly owner: string;
  readonly acquiredAt: Date;
  readonly leaseUntil: Date;
  /** Keys it reads and writes (locks whose lease has not passed). */
  readonly inputs: string[];
  readonly outputs: string[];
}

/** One flow-history edge: `input -> job` or `job -> output`, names sanitized. */
export interface FlowEdge {
  readonly kind: 'input' | 'output';
  readonly from: string;
  readonly to: string;
  /** The last time a job with this edge took its locks (database clock). */
  readonly lastSeen: Date;
}

/** An edge met in a traversal, with its distance (1 = touches the start). */
export interface TraversedEdge extends FlowEdge {
  readonly depth: number;
}

/** A time window over `lastSeen`: `after <= lastSeen < before`. */
export interface TimeWindow {
  readonly after?: Date;
  readonly before?: Date;
}

/** Settings of `taskrow.resources()`. */
export interface ResourcesOptions {
  /** Record the flow history (jobs.py's GRAPH_HISTORY). Default true. */
  readonly history?: boolean;
  /** Release held locks as failed on SIGTERM, SIGINT and `beforeExit`. Default true. */
  readonly releaseOnExit?: boolean;
}

/**
 * jobs.py's input/output locks over MySQL or MariaDB. Keys are global under the table prefix.
 * Locks use row locks in short transactions only (no GET_LOCK, no LOCK TABLES), so they work on
 * clustered MySQL; leases run on the database clock.
 */
export interface Resources {
  /** A job handle; nothing is locked until `acquire()` or `run()`. Keys are validated here. */
  job(name: ResourceKey, options?: ResourceJobOptions): ResourceJob;
  /** `job(name, options).acquire()`. */
  acquire(name: ResourceKey, options: ResourceJobOptions): Promise<ResourceJob>;
  /** `job(name, options).run(fn)`. */
  run<T>(name: ResourceKey, options: ResourceJobOptions, fn: (job: ResourceJob, signal: AbortSignal) => Promise<T> | T): Promise<T>;
  /** The keys among `keys` that exist now, in input order. */
  exists(keys: ResourceKey | Iterable<ResourceKey>): Promise<string[]>;
  /**
   * Admin: marks keys as existing, as a successful job would (jobs.py's create outputs), expiring
   * after `ttl` milliseconds when given. Ignores locks. Runs inside the application's transaction under
   * `taskrow.in(tx)`. Resolves to the number of keys.
   */
  produce(keys: ResourceKey | Iterable<ResourceKey>, options?: { ttl?: number | null; by?: string }): Promise<number>;
  /** Admin: marks keys as not existing. Resolves to the number that existed. */
  unproduce(keys: ResourceKey | Iterable<ResourceKey>): Promise<number>;
  /**
   * Admin: removes the reader locks of `inputs` and the writer locks of `outputs`, whoever holds
   * them (jobs.py's force unlock). Their holders see them lost. Resolves to the locks removed.
   */
  forceRelease(keys: { inputs?: Iterable<ResourceKey>; outputs?: Iterable<ResourceKey> }): Promise<number>;
  /** Jobs whose lease has not passed, oldest first, with the keys they hold. */
  running(): Promise<RunningJob[]>;
  /** Deletes lock and job rows whose lease has passed (they already count as free). */
  sweep(): Promise<number>;
  /** History edges seen in the window, sorted by kind, from, to. */
  edges(window?: TimeWindow): Promise<FlowEdge[]>;
  /** Breadth-first walk from `name` (a key or job, sanitized) towards jobs and outputs. */
  downstream(name: ResourceKey, options?: TimeWindow & { depth?: number }): Promise<TraversedEdge[]>;
  /** Breadth-first walk from `name` towards jobs and inputs. */
  upstream(name: ResourceKey, options?: TimeWindow & { depth?: number }): Promise<TraversedEdge[]>;
}
