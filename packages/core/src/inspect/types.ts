import type { JobState } from '../queue/model/tables.js';

/** A count read with a cap: `exact` is false when there were more than `value` rows (the cap). */
export interface CappedCount {
  readonly value: number;
  readonly exact: boolean;
}

/** One queue as the overview shows it. */
export interface QueueSummary {
  readonly name: string;
  /** Jobs per state, each counted up to `countLimit`. */
  readonly counts: Readonly<Record<JobState, CappedCount>>;
  /** Milliseconds the oldest runnable job has waited since it became due (database clock); null when none is runnable. */
  readonly oldestRunnableAge: number | null;
}

/** One loop from the registry. */
export interface LoopSummary {
  readonly name: string;
  /** `int`, `bigint` or `string(N)`. */
  readonly idType: string;
  readonly createdAt: Date;
}

/** One Dones namespace. */
export interface DonesSummary {
  readonly name: string;
  readonly createdAt: Date;
  /** Done keys, counted up to `countLimit`. */
  readonly count: CappedCount;
}

/** A page of names; `next` is the `after` of the next page, undefined on the last page. */
export interface InspectPage<T> {
  readonly items: T[];
  readonly next: string | undefined;
}

/** Paging and counting options of the `Inspect` reads. */
export interface InspectPageOptions {
  /** Continue after this name (the previous page's `next`). */
  readonly after?: string;
  /** Most items per page, 1 to 200; default 50. */
  readonly limit?: number;
  /** Count at most this many rows per count, 1 to 10,000,000; default 100,000. */
  readonly countLimit?: number;
}

/**
 * Read-only views across every queue, loop and Dones namespace under the table prefix, for
 * dashboards and metrics. Every read is a bounded number of statements, each an index range read
 * (never a table scan): names come from a loose scan of the queue index or from primary keys, and
 * counts stop at `countLimit` rows. MUST NOT lock or write anything. Reads are not a snapshot: a
 * queue created between two pages may be missed, one emptied may still be listed with zero counts.
 */
export interface Inspect {
  /** A page of queues in name order (a queue exists while it holds a job), with counts and age. */
  queues(options?: InspectPageOptions): Promise<InspectPage<QueueSummary>>;
  /** One queue's summary (zero counts when it holds no job). Validates `name` first. */
  queue(name: string, options?: Pick<InspectPageOptions, 'countLimit'>): Promise<QueueSummary>;
  /** A page of loops in name order, from the loop registry. */
  loops(options?: Omit<InspectPageOptions, 'countLimit'>): Promise<InspectPage<LoopSummary>>;
  /** A page of Dones namespaces in name order, each with its (capped) count of done keys. */
  donesNamespaces(options?: InspectPageOptions): Promise<InspectPage<DonesSummary>>;
  /** One Dones namespace with its (capped) count, or null when it was never used. Validates `name` first. */
  donesNamespace(name: string, options?: Pick<InspectPageOptions, 'countLimit'>): Promise<DonesSummary | null>;
}
