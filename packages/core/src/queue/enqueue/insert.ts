import { leaseEnd } from '../model/gate.js';
import { PHASE } from '../model/tables.js';

/**
 * The INSERT of new jobs, written once for the client's enqueue (`enqueue.ts`) and every enqueue
 * procedure (`call.ts`, `many-call.ts`, the hand-offs): a new job is a set of values by column,
 * each value SQL (literals and `?` in a client's statement; parameters, variables or a
 * `JSON_TABLE`'s columns in a routine).
 */

/** The columns a new job's INSERT names, in this order (a client's `?` values take their parameters in it too). */
const COLUMNS = [
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
  'conc_key',
  'created_at',
] as const;

/**
 * A new job's values by column, each SQL; `attempt` (else 0) and `dedup_k` (else NULL) where given.
 * `run_at` may name `` `due_at` ``: in a `VALUES` row that is this row's due time (its column comes first).
 */
export type JobValues = Record<Exclude<(typeof COLUMNS)[number], 'attempt' | 'dedup_k'>, string> & { readonly attempt?: string; readonly dedup_k?: string };

const given = (v: JobValues): (typeof COLUMNS)[number][] => COLUMNS.filter((c) => v[c] !== undefined);

/**
 * `INSERT INTO <jobs> (...)` naming the columns `v` gives values for, in `COLUMNS` order. Every row
 * the statement inserts MUST give the same ones (`jobValues` of each lists them in this order).
 */
export const insertInto = (jobs: string, v: JobValues): string =>
  `INSERT INTO ${jobs} (${given(v)
    .map((c) => `\`${c}\``)
    .join(', ')})`;

/** The values of `v`, comma-separated, in the order `insertInto` names their columns. */
export const jobValues = (v: JobValues): string =>
  given(v)
    .map((c) => v[c])
    .join(', ');

/** A due time `delay` microseconds after the run time `at` (a UTC time as text; NULL: now). SQL each. */
export const dueFrom = (at: string, delay: string): string => `DATE_ADD(COALESCE(CAST(${at} AS DATETIME(6)), UTC_TIMESTAMP(6)), INTERVAL ${delay} MICROSECOND)`;

/** A new job's due time from its run time `at` and `delay` (SQL each): now when it has neither, else `dueFrom`. */
export const dueAt = (at: string, delay: string): string => `IF(${at} IS NULL AND ${delay} = 0, UTC_TIMESTAMP(6), ${dueFrom(at, delay)})`;

/**
 * `v` leased as it is inserted, to the fencing token `token`: running, attempt 1, out of the ready
 * order, run at `now`, its lease ending `lease` microseconds after `now` (database clock), created
 * `now` (SQL each). The hand-offs' lease of a new job; a claim's lease of a ready one is `leaseSet`.
 */
export const leasedValues = (v: JobValues, token: string, lease: string, now: string): JobValues => ({
  ...v,
  phase: String(PHASE.running),
  ready_priority: '0',
  due_at: leaseEnd(lease, now),
  run_at: now,
  attempt: '1',
  token,
  created_at: now,
});
