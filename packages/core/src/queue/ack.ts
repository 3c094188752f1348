import { placeholderList } from '../chunk.js';
import type { Executor } from '../engine/executor.js';
import { invalid, TaskrowError } from '../errors.js';
import type { SqlConnection, SqlValue } from '../port.js';
import { RollBack } from '../retry.js';
import { intArg, show, toNumber } from '../validate.js';
import { LeaseLostError } from './errors.js';
import { MAX_CLAIM } from './options.js';
import { NOW_MICROS, PHASE, type QueueTables } from './tables.js';
import type { JobRef } from './types.js';

/** Most jobs one ack call takes (one transaction). */
export const MAX_ACK = 10 * MAX_CLAIM;

/** Job objects acked through taskrow (completed, failed or released): acking one again is a caller error. */
const settled = new WeakSet<object>();

/** True when `ref` was completed, failed or released through taskrow. */
export function isSettled(ref: JobRef): boolean {
  return settled.has(ref);
}

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
    if (settled.has(r)) throw invalid(`cannot ${action} job ${id}: this job was already completed, failed or released`);
    return r;
  });
}

/**
 * The fencing check of each row as a WHERE clause with its parameters: the job is running in
 * `queue` under the caller's token (`lease = CASE id WHEN ? THEN ? ... END`).
 */
export function fence(queue: string, refs: readonly JobRef[]): { sql: string; params: SqlValue[] } {
  return {
    sql: `\`id\` IN (${placeholderList(refs.length)}) AND \`queue\` = ? AND \`phase\` = ${PHASE.running} AND \`lease\` = CASE \`id\`${' WHEN ? THEN ?'.repeat(refs.length)} END`,
    params: [...refs.map((r) => r.id), queue, ...refs.flatMap((r) => [r.id, r.token])],
  };
}

/** Leaves the fast path's transaction (rolling it back) when not every job was still held. */
class FastPathMiss extends RollBack {}

const byId = (a: JobRef, b: JobRef): number => a.id - b.id;

/**
 * The common case in one statement: `write` applies the fenced change to every job and resolves to
 * the rows it matched. When that is every job, commits and resolves true; otherwise rolls back and
 * resolves false, and the caller runs `ackHeld` to find out which jobs were lost. Not on a joined
 * client (the application's transaction cannot be rolled back to before the write).
 */
export async function ackFast(
  exec: Executor,
  refs: readonly JobRef[],
  once: boolean,
  write: (conn: SqlConnection, refs: readonly JobRef[]) => Promise<number>,
): Promise<boolean> {
  if (exec.client.joined) return false;
  const sorted = [...refs].sort(byId); // one lock order for every acker
  try {
    await exec.transaction(async (conn) => {
      if ((await write(conn, sorted)) !== sorted.length) throw new FastPathMiss();
    });
  } catch (err) {
    if (err instanceof FastPathMiss) return false;
    throw err;
  }
  if (once) for (const r of refs) settled.add(r);
  return true;
}

/**
 * Runs an ack in one READ COMMITTED transaction: locks the named rows by primary key, keeps those
 * the caller still holds (same queue, running, same fencing token), and passes them to `write`,
 * whose statements MUST also carry the fencing check (`fence`). A row of another queue aborts the
 * ack before anything is written. After the commit, rejects with `LeaseLostError` when some
 * jobs were not held; the held ones are acked. `once`: the Job objects count as acked afterwards.
 */
export async function ackHeld<R>(
  exec: Executor,
  t: QueueTables,
  queue: string,
  refs: readonly JobRef[],
  action: string,
  once: boolean,
  write: (conn: SqlConnection, held: readonly HeldRow[]) => Promise<R>,
): Promise<{ result: R | undefined; held: readonly HeldRow[] }> {
  const sorted = [...refs].sort(byId); // one lock order for every acker
  const { result, held, lost } = await exec.transaction(async (conn) => {
    const { rows } = await conn.query<{ id: unknown; queue: string; phase: unknown; lease: unknown; attempt: unknown; max_attempts: unknown; now_us: unknown }>(
      `SELECT \`id\`, \`queue\`, \`phase\`, \`lease\`, \`attempt\`, \`max_attempts\`, ${NOW_MICROS} AS now_us
       FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` IN (${placeholderList(sorted.length)}) FOR UPDATE`,
      sorted.map((r) => r.id),
    );
    const byId = new Map(rows.map((r) => [toNumber(r.id), r]));
    const held: HeldRow[] = [];
    const lost: number[] = [];
    for (const ref of sorted) {
      const row = byId.get(ref.id);
      if (row && row.queue !== queue) throw invalid(`cannot ${action} job ${ref.id}: it belongs to queue ${show(row.queue)}, not ${show(queue)}`);
      if (!row || toNumber(row.phase) !== PHASE.running || toNumber(row.lease) !== ref.token) lost.push(ref.id);
      else held.push({ ref, attempt: toNumber(row.attempt), maxAttempts: toNumber(row.max_attempts), nowUs: toNumber(row.now_us) });
    }
    const result = held.length > 0 ? await write(conn, held) : undefined;
    return { result, held, lost };
  }, { isolation: 'READ COMMITTED' });
  if (once) for (const h of held) settled.add(h.ref);
  if (lost.length > 0) throw new LeaseLostError(action, lost, held.map((h) => h.ref.id));
  return { result, held };
}

/** Checks that a fenced write touched every held row (they are locked, so anything else is a bug). */
export function expectAll(action: string, affected: number, held: readonly HeldRow[]): void {
  if (affected !== held.length) {
    throw new TaskrowError('DATABASE_ERROR', `${action} matched ${affected} of ${held.length} locked jobs; the rows changed under their lock`);
  }
}
