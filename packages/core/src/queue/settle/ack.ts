import { placeholderList } from '../../chunk.js';
import type { Executor } from '../../engine/executor.js';
import { invalid, TaskrowError } from '../../errors.js';
import type { SqlConnection, SqlValue } from '../../port.js';
import { RollBack } from '../../retry.js';
import { intArg, show, toNumber } from '../../validate.js';
import { LeaseLostError } from '../model/errors.js';
import { heldSql } from '../model/fence.js';
import { isSettled, markSettled } from '../model/held.js';
import { MAX_CLAIM } from '../model/options.js';
import { epochMicros, NOW_MICROS, PHASE, type QueueTables } from '../model/tables.js';
import type { JobRef } from '../model/types.js';

/** Most jobs one ack call takes (one transaction). */
export const MAX_ACK = 10 * MAX_CLAIM;

/** A job row still held by the caller's lease, locked for this transaction. */
export interface HeldRow {
  readonly ref: JobRef;
  readonly attempt: number;
  readonly maxAttempts: number;
  /** The database clock, microseconds since the epoch. */
  readonly nowUs: number;
}

/** Validates job references before any SQL: shape, queue, duplicates, and jobs already acked through taskrow. */
export function refsArg(queue: string, jobs: unknown, action: string): JobRef[] {
  const list = (Array.isArray(jobs) ? jobs : [jobs]) as unknown[];
  if (list.length > MAX_ACK) throw invalid(`${action}() takes at most ${MAX_ACK} jobs per call, got ${list.length}`);
  const seen = new Set<number>();
  return list.map((j, i) => {
    if (j === null || typeof j !== 'object') throw invalid(`${action}() expects jobs returned by claim(), got ${show(j)} at #${i}`);
    const r = j as JobRef;
    const id = intArg(`${action}() job id`, r.id, 1);
    intArg(`${action}() job token`, r.token, 0);
    if (r.queue !== queue) {
      throw invalid(`cannot ${action} job ${id}: it belongs to queue ${show(r.queue)}, not ${show(queue)}`);
    }
    if (seen.has(id)) throw invalid(`${action}() got job ${id} twice in one call`);
    seen.add(id);
    if (isSettled(r)) throw invalid(`cannot ${action} job ${id}: this job was already completed, failed or released`);
    return r;
  });
}

/**
 * The fencing check of each row as a WHERE clause with its parameters: the job is one of `refs`,
 * running in `queue` under the caller's token (`heldSql`, the token `CASE id WHEN ? THEN ? ... END`).
 */
export function fence(queue: string, refs: readonly JobRef[]): { sql: string; params: SqlValue[] } {
  return {
    sql: `\`id\` IN (${placeholderList(refs.length)}) AND ${heldSql('?', `CASE \`id\`${' WHEN ? THEN ?'.repeat(refs.length)} END`)}`,
    params: [...refs.map((r) => r.id), queue, ...refs.flatMap((r) => [r.id, r.token])],
  };
}

/** Leaves the fast path's transaction (rolling it back) when not every job was still held. */
class FastPathMiss extends RollBack {
  constructor(next: 'check' | 'recover') {
    super(next);
  }
}

const byId = (a: JobRef, b: JobRef): number => a.id - b.id;

/**
 * More work for the fast path's transaction once its write matched every job (a claim that takes
 * the next jobs with the completion of the last, see `complete-claim.ts`).
 */
export interface FastTail<T> {
  /** Runs after the write, in the same transaction. */
  run(conn: SqlConnection): Promise<T>;
  /**
   * Runs first in a run retried after a lost connection: the tail's own proof that the lost run
   * committed (resolving to what that run's tail returned), or undefined when it cannot tell.
   */
  recover(conn: SqlConnection): Promise<T | undefined>;
}

/** How the fast path ended: applied (with the tail's value), or where the checking path must go. */
export type FastOutcome<T> = { readonly next: 'applied'; readonly value: T | undefined } | { readonly next: 'check' | 'recover' };

/**
 * The common case in one statement: `write` applies the fenced change to every job and resolves to
 * the rows it matched. When that is every job, runs `tail` (when given) in the same transaction,
 * commits and resolves applied; otherwise rolls back (the tail's work too) and resolves where to go
 * next: the caller runs `ackHeld` to find out which jobs were lost. Not on a joined client (the
 * application's transaction cannot be rolled back to before the write). With a tail the
 * transaction runs READ COMMITTED.
 */
export async function ackFast<T = undefined>(
  exec: Executor,
  refs: readonly JobRef[],
  once: boolean,
  write: (conn: SqlConnection, refs: readonly JobRef[]) => Promise<number>,
  tail?: FastTail<T>,
): Promise<FastOutcome<T>> {
  if (exec.client.joined) return { next: 'check' };
  const sorted = [...refs].sort(byId); // one lock order for every acker
  // A job that may have a concurrency key frees its slot: that count MUST read the latest commits.
  const keyed = refs.some((r) => (r as { concurrencyKey?: unknown }).concurrencyKey !== null);
  let value: T | undefined;
  try {
    value = await exec.attempts(
      (attempt) => async (conn) => {
        if (attempt.afterLost) {
          const before = tail ? await tail.recover(conn) : undefined;
          if (before !== undefined) return before;
          // An earlier run may have committed: only the checking path can tell what it applied.
          throw new FastPathMiss('recover');
        }
        if ((await write(conn, sorted)) !== sorted.length) throw new FastPathMiss('check');
        return tail?.run(conn);
      },
      keyed || tail ? { isolation: 'READ COMMITTED' } : {},
    );
  } catch (err) {
    if (err instanceof FastPathMiss) return { next: err.message as 'check' | 'recover' };
    throw err;
  }
  if (once) markSettled(refs);
  return { next: 'applied', value };
}

/** A job row as the checking path reads it. */
interface AckRow {
  id: unknown;
  queue: string;
  phase: unknown;
  token: unknown;
  attempt: unknown;
  max_attempts: unknown;
  due_us: unknown;
  now_us: unknown;
}

/** A job an earlier, lost run of this ack already acked: its row as that run left it (undefined: deleted). */
export interface Recovered {
  readonly ref: JobRef;
  readonly row: { readonly phase: number; readonly dueUs: number } | undefined;
}

/** What a checking ack found: held rows it acks now, rows a lost run acked, and the rest (lost). */
interface Sorted {
  held: HeldRow[];
  recovered: Recovered[];
  lost: number[];
}

/**
 * The lease the caller's claim (or last extend) reported, as a lower bound on the expiry the
 * database holds (a `Job`'s `leaseUntil`; a bare `JobRef` has none).
 */
const leaseFloorUs = (ref: JobRef): number | undefined => {
  const until = (ref as { leaseUntil?: unknown }).leaseUntil;
  return until instanceof Date ? until.getTime() * 1000 : undefined;
};

/**
 * Sorts the locked rows. After a lost run, a row that no longer carries the caller's lease was
 * changed by that run when the change is of a kind `after` allows (phases the action leaves;
 * undefined row: deleted) and the database clock is still before the lease's lower bound: no
 * one else can take a job before its lease expires, so any change made meanwhile was the caller's.
 */
function sortRows(queue: string, action: string, sorted: readonly JobRef[], rows: AckRow[], nowUs: number, after: readonly number[] | undefined): Sorted {
  const byId = new Map(rows.map((r) => [toNumber(r.id), r]));
  const out: Sorted = { held: [], recovered: [], lost: [] };
  for (const ref of sorted) {
    const row = byId.get(ref.id);
    if (row && row.queue !== queue) throw invalid(`cannot ${action} job ${ref.id}: it belongs to queue ${show(row.queue)}, not ${show(queue)}`);
    if (row && toNumber(row.phase) === PHASE.running && toNumber(row.token) === ref.token) {
      out.held.push({ ref, attempt: toNumber(row.attempt), maxAttempts: toNumber(row.max_attempts), nowUs });
      continue;
    }
    const floor = leaseFloorUs(ref);
    const ours =
      after !== undefined &&
      floor !== undefined &&
      nowUs < floor &&
      (row === undefined ? after.includes(-1) : toNumber(row.token) === ref.token && after.includes(toNumber(row.phase)));
    if (ours) out.recovered.push({ ref, row: row && { phase: toNumber(row.phase), dueUs: toNumber(row.due_us) } });
    else out.lost.push(ref.id);
  }
  return out;
}

/** How a checking ack runs: `after` lists what an earlier lost run of it may have left (phases; -1: deleted). */
export interface AckCheck {
  readonly action: string;
  readonly once: boolean;
  readonly after: readonly number[];
  /** The fast path's run may have committed before its reply was lost. */
  readonly recover: boolean;
}

/**
 * Runs an ack in one READ COMMITTED transaction: locks the named rows by primary key, keeps those
 * the caller still holds (same queue, running, same fencing token), and passes them to `write`,
 * whose statements MUST also carry the fencing check (`fence`). A row of another queue aborts the
 * ack before anything is written. After the commit, rejects with `LeaseLostError` when some
 * jobs were not held; the held ones are acked. `once`: the Job objects count as acked afterwards.
 * When an earlier run (or the fast path) was lost after it may have committed, jobs that run
 * already acked are reported as applied (`recovered`), not lost, whenever that can be proven
 * (see `sortRows`).
 */
export async function ackHeld<R>(
  exec: Executor,
  t: QueueTables,
  queue: string,
  refs: readonly JobRef[],
  check: AckCheck,
  write: (conn: SqlConnection, held: readonly HeldRow[]) => Promise<R>,
): Promise<{ result: R | undefined; held: readonly HeldRow[]; recovered: readonly Recovered[] }> {
  const sorted = [...refs].sort(byId); // one lock order for every acker
  const { result, found } = await exec.attempts(
    (attempt) => async (conn) => {
      const { rows } = await conn.query<AckRow>(
        `SELECT \`id\`, \`queue\`, \`phase\`, \`token\`, \`attempt\`, \`max_attempts\`, ${epochMicros('`due_at`')} AS due_us, ${NOW_MICROS} AS now_us
       FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` IN (${placeholderList(sorted.length)}) FOR UPDATE`,
        sorted.map((r) => r.id),
      );
      const nowUs = rows[0] ? toNumber(rows[0].now_us) : await dbNowUs(conn);
      const found = sortRows(queue, check.action, sorted, rows, nowUs, check.recover || attempt.afterLost ? check.after : undefined);
      const result = found.held.length > 0 ? await write(conn, found.held) : undefined;
      return { result, found };
    },
    { isolation: 'READ COMMITTED' },
  );
  const { held, recovered, lost } = found;
  if (check.once) markSettled([...held.map((h) => h.ref), ...recovered.map((r) => r.ref)]);
  if (lost.length > 0)
    throw new LeaseLostError(
      check.action,
      lost,
      [...held, ...recovered].map((h) => h.ref.id),
    );
  return { result, held, recovered };
}

async function dbNowUs(conn: SqlConnection): Promise<number> {
  const { rows } = await conn.query<{ now_us: unknown }>(`SELECT ${NOW_MICROS} AS now_us`);
  return toNumber(rows[0]?.now_us);
}

/** Checks that a fenced write touched every held row (they are locked, so anything else is a bug). */
export function expectAll(action: string, affected: number, held: readonly HeldRow[]): void {
  if (affected !== held.length) {
    throw new TaskrowError('DATABASE_ERROR', `${action} matched ${affected} of ${held.length} locked jobs; the rows changed under their lock`);
  }
}
