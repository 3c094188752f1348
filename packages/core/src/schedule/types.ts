import type { EnqueueOptions } from '../queue/model/types.js';

/**
 * What a pass over a schedule does with ticks that passed while no scheduler ran. Of the due
 * ticks (every tick from `nextAt` up to the database's now), the latest is the current one and
 * the earlier ones are missed (a whole period went by without a scheduler handling them):
 * - `'once'` (default): one job, for the latest due tick; missed ticks get none.
 * - `'skip'`: a job only when no tick was missed; after a gap nothing runs until the next tick.
 * - `{ each: N }` (1 to 1000): one job per due tick, for the latest N of them.
 */
export type MissedPolicy = 'skip' | 'once' | { readonly each: number };

/** The enqueue options each job of a schedule gets: every option of `enqueue()` except `runAt`. */
export type ScheduleJobOptions = Omit<EnqueueOptions, 'runAt'>;

/** What `upsert()` stores: a queue, exactly one of `cron` and `every`, and the job to enqueue per tick. */
export interface ScheduleSpec<Payload = unknown> {
  /** The queue each tick's job goes to (queue name rules). */
  readonly queue: string;
  /**
   * A cron pattern of 5 fields (minute first) or 6 (second first), croner's syntax (`L`, `W`, `#`,
   * `?`, nicknames such as `@hourly`); day of month and day of week combine with OR, as in cron.
   */
  readonly cron?: string;
  /** The IANA time zone the cron pattern is read in (`Europe/Berlin`); default `UTC`. Cron only. */
  readonly tz?: string;
  /**
   * A fixed interval in milliseconds, whole seconds (a multiple of 1000) from 1,000 to
   * 315,360,000,000 (10 years); ticks at creation time (whole second) + k * every.
   */
  readonly every?: number;
  /** Each job's payload (JSON, at most 1 MiB); default null. */
  readonly payload?: Payload;
  /** Each job's options; `delay` runs a job that many milliseconds after its tick. */
  readonly options?: ScheduleJobOptions;
  /** Ticks missed while no scheduler ran; default `'once'`. */
  readonly missed?: MissedPolicy;
}

/** A stored schedule as `get()` and `list()` show it. Times are the database clock's. */
export interface ScheduleInfo<Payload = unknown> {
  readonly name: string;
  readonly queue: string;
  readonly cron: string | null;
  /** The cron pattern's time zone; null for an interval. */
  readonly tz: string | null;
  /** The interval in milliseconds; null for a cron pattern. */
  readonly every: number | null;
  readonly payload: Payload;
  readonly options: ScheduleJobOptions;
  readonly missed: MissedPolicy;
  /** The next tick that has no job yet; null when the pattern has no further tick. */
  readonly nextAt: Date | null;
  /** The latest tick a job was enqueued for; null before the first. */
  readonly lastAt: Date | null;
  readonly createdAt: Date;
  /** The last `upsert()`. */
  readonly updatedAt: Date;
}

/** How a scheduler started with `start()` runs. */
export interface SchedulerOptions {
  /**
   * Most milliseconds between looks at the schedules table, 10 to 3,600,000, default 5,000: a scheduler sleeps
   * until the earliest `nextAt` it read, but a schedule another process adds or moves earlier is
   * seen within this bound.
   */
  readonly pollInterval?: number;
  /** Errors of a pass (the scheduler goes on after `pollInterval`); default `console.error`. */
  readonly onError?: (error: unknown) => void;
}

/** A running scheduler. */
export interface Scheduler {
  /** Jobs this scheduler enqueued so far. */
  readonly enqueued: number;
  /**
   * Stops after the pass in flight (a tick's transaction is never cut short); idempotent.
   * `tr.close()` calls it too. Rejects with `CLIENT_CLOSED` when the scheduler ended because the
   * application's client was closed under it.
   */
  stop(): Promise<void>;
}

/**
 * Recurring schedules stored in the database, each enqueuing one job per tick. Any number of
 * schedulers (`start()`, `runDue()`) may run in any number of processes: each tick gets exactly one
 * job, because the scheduler that enqueues it first moves the schedule's `nextAt` past it with a
 * compare-and-set in the same transaction as the enqueue. Every decision uses the database clock.
 */
export interface Schedules {
  /**
   * Creates the schedule `name` or replaces its definition. MUST validate everything before any SQL
   * (`INVALID_NAME`, `INVALID_ARGUMENT`). A new schedule's first tick is the first after the
   * database's now; an update that keeps `cron`, `tz` and `every` keeps `nextAt` (no tick is lost
   * or repeated), one that changes them moves `nextAt` to the first new tick after now. Two
   * upserts racing: the later commit wins whole. Joins `in(tx)`.
   */
  upsert<P = unknown>(name: string, spec: ScheduleSpec<P>): Promise<ScheduleInfo<P>>;
  /** The schedule `name`, or null. MUST NOT lock (reads the latest committed row). */
  get<P = unknown>(name: string): Promise<ScheduleInfo<P> | null>;
  /** Every schedule, by name. MUST NOT lock. */
  list(): Promise<ScheduleInfo[]>;
  /**
   * Removes the schedule `name`; resolves true when it existed. Jobs already enqueued stay. A
   * scheduler handling one of its ticks at that moment either committed first (its job stays) or
   * finds the row gone (no job). Joins `in(tx)`.
   */
  remove(name: string): Promise<boolean>;
  /**
   * One pass: enqueues the jobs of every due schedule and resolves to how many this call
   * enqueued. MUST NOT enqueue a tick twice, however many schedulers run, and MUST NOT leave a due
   * tick without its job unless the schedule's `missed` policy drops it. The loser of a race for a
   * tick (another scheduler committed it first) enqueues nothing and counts 0; so does a tick whose
   * COMMIT reply was lost (its job exists: the retry finds the tick taken). For a cron job of the
   * system's own, or a serverless function. Not inside `in(tx)`.
   */
  runDue(): Promise<number>;
  /**
   * Starts a scheduler in this process: `runDue()` whenever the soonest schedule comes due (by the
   * database clock), and at least every `pollInterval`, until `stop()`. Same guarantees as
   * `runDue()`; a failed pass goes to `onError` and MUST NOT stop the scheduler. Not inside `in(tx)`.
   */
  start(options?: SchedulerOptions): Scheduler;
}
