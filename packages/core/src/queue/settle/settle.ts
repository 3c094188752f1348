import { performance } from 'node:perf_hooks';
import type { SqlConnection, SqlValue } from '../../port.js';
import { keepDeadKeys } from '../model/dead-keys.js';
import { freeSlots, keysOf } from '../admission/limits.js';
import { announce } from '../wake/ring.js';
import { claimCursor } from '../model/cursor.js';
import { LeaseLostError } from '../model/errors.js';
import { leaseConfirmed } from '../model/held.js';
import { ackFast, ackHeld, expectAll, fence, type FastTail, type HeldRow } from './ack.js';
import { backoffMs, errorText, toMicros } from '../model/options.js';
import { toNumber } from '../../validate.js';
import { deleteById, NOW_MICROS, NOW_PLUS, PHASE, updateById } from '../model/tables.js';
import type { FailOutcome, JobRef } from '../model/types.js';
import type { AckContext } from './context.js';

/** Frees concurrency keys' slots in an ack's transaction, and rings idle workers once it committed (see `slotFreer`). */
interface SlotFreer {
  free(conn: SqlConnection, keys: readonly string[]): Promise<void>;
  ring(): void;
}

/** A completion's write of `jobs` in the ack's transaction; resolves to the rows matched (see `completionWrite`). */
type CompletionWrite = (conn: SqlConnection, jobs: readonly JobRef[]) => Promise<number>;

/**
 * Frees the slots of `keys` in the ack's transaction (see `freeSlots`) and, once an ack that
 * admitted blocked jobs committed, rings idle workers of the queue (`ring`, see `announce`).
 */
function slotFreer(c: AckContext): SlotFreer {
  let admitted = 0; // of the last run: a rolled-back run is followed by another that sets it again
  return {
    free: async (conn, keys) => void (admitted = await freeSlots(conn, c.t, c.queue, keys, c.exec.client.joined)),
    ring: () => {
      announce(c.exec, c.t, c.queue, admitted);
    },
  };
}

/** The `result` column set for `jobs` from `results` (JSON text by job id): a CASE over the ids that have one. */
function resultSet(jobs: readonly JobRef[], results: ReadonlyMap<number, string> | undefined): { sql: string; params: SqlValue[] } {
  const withResult = jobs.filter((j) => results?.has(j.id));
  if (withResult.length === 0) return { sql: '', params: [] };
  return {
    sql: `, \`result\` = CASE \`id\`${' WHEN ? THEN ?'.repeat(withResult.length)} ELSE \`result\` END`,
    params: withResult.flatMap((j) => [j.id, results!.get(j.id)!]),
  };
}

/**
 * Deletes (or keeps as done, dedup key freed, with its result from `results` by job id) the held
 * jobs; see `Queue.complete`.
 */
export async function completeJobs(c: AckContext, refs: readonly JobRef[], results?: ReadonlyMap<number, string>): Promise<void> {
  if (refs.length > 0) await completeThen(c, refs, results);
}

/**
 * The write of a completion of `jobs` in the ack's transaction: deleted, or kept as done (dedup key
 * freed, with its result from `results` by job id); when every job matched, their concurrency
 * keys' slots are freed with it (`slots`). Resolves to the rows matched.
 */
function completionWrite(c: AckContext, results: ReadonlyMap<number, string> | undefined, slots: SlotFreer): CompletionWrite {
  return async (conn, jobs) => {
    const keys = await keysOf(conn, c.t, jobs);
    const f = fence(c.queue, jobs);
    const r = resultSet(jobs, results);
    const res =
      c.settings.keepFinishedFor > 0
        ? await conn.query(
            `${updateById(c.t.jobs)} SET \`dedup_k\` = NULL, \`finished_at\` = UTC_TIMESTAMP(6), \`due_at\` = ${NOW_PLUS}, \`phase\` = ${PHASE.done}${r.sql} WHERE ${f.sql}`,
            [toMicros(c.settings.keepFinishedFor), ...r.params, ...f.params],
          )
        : await conn.query(`${deleteById(c.t.jobs)} WHERE ${f.sql}`, f.params);
    if (res.affectedRows === jobs.length) await slots.free(conn, keys);
    return res.affectedRows;
  };
}

/**
 * The checking path of a completion: each job of `refs` read under lock and completed with
 * `write` when still held; with `recover`, a job a lost run may have completed (deleted, or kept
 * as done and perhaps purged since) counts as applied. Rejects with `LeaseLostError` naming the
 * others.
 */
async function completeChecked(c: AckContext, refs: readonly JobRef[], recover: boolean, write: CompletionWrite): Promise<void> {
  const check = { action: 'complete', once: true, after: [-1, PHASE.done], recover };
  await ackHeld(c.exec, c.t, c.queue, refs, check, async (conn, held) => {
    expectAll(
      'complete',
      await write(
        conn,
        held.map((h) => h.ref),
      ),
      held,
    );
  });
}

/**
 * Completes `refs` as `completeJobs` does and, when every job was still held, runs `tail` in the
 * same transaction (see `FastTail`): resolves to the tail's value, or to undefined when the tail did
 * not run because a job was not held or a lost run could not be proven (the completion then went
 * the checking way: the held jobs are completed and a `LeaseLostError` names the others). The tail
 * MUST NOT count on running: its caller does its work on its own when it did not.
 */
export async function completeThen<T>(
  c: AckContext,
  refs: readonly JobRef[],
  results: ReadonlyMap<number, string> | undefined,
  tail?: FastTail<T>,
): Promise<T | undefined> {
  const slots = slotFreer(c);
  const write = completionWrite(c, results, slots);
  const fast = await ackFast(c.exec, refs, true, write, tail);
  if (fast.next === 'applied') {
    slots.ring();
    return fast.value;
  }
  await completeChecked(c, refs, fast.next === 'recover', write);
  slots.ring();
  return undefined;
}

/**
 * Schedules a retry with backoff (or after `retryIn` milliseconds), or makes the job dead on its last
 * attempt, or at once with `'never'`; see `Queue.fail`.
 */
export async function failJob(c: AckContext, ref: JobRef, error: unknown, retryIn: number | 'never' | undefined): Promise<FailOutcome> {
  const text = errorText(error);
  const check = { action: 'fail', once: true, after: [PHASE.delayed, PHASE.dead], recover: false };
  const slots = slotFreer(c);
  const { result, recovered } = await ackHeld(c.exec, c.t, c.queue, [ref], check, async (conn, held): Promise<FailOutcome> => {
    const h = held[0] as HeldRow;
    const f = fence(
      c.queue,
      held.map((h) => h.ref),
    );
    // Dead or retrying later, the job leaves its concurrency key's slot to the next blocked job.
    const freed = async (): Promise<void> => slots.free(conn, await keysOf(conn, c.t, [h.ref]));
    if (retryIn === 'never' || h.attempt >= h.maxAttempts) {
      await keepDeadKeys(conn, c.t, [h.ref.id]);
      const res = await conn.query(
        `${updateById(c.t.jobs)} SET \`last_error\` = ?, \`dedup_k\` = NULL, \`due_at\` = UTC_TIMESTAMP(6), \`phase\` = ${PHASE.dead} WHERE ${f.sql}`,
        [text, ...f.params],
      );
      expectAll('fail', res.affectedRows, held);
      await freed();
      return { state: 'dead' };
    }
    const delay = toMicros(retryIn ?? backoffMs(h.attempt, c.settings));
    const res = await conn.query(
      `${updateById(c.t.jobs)} SET \`last_error\` = ?, \`run_at\` = ${NOW_PLUS}, \`due_at\` = ${NOW_PLUS}, \`phase\` = ${PHASE.delayed} WHERE ${f.sql}`,
      [text, delay, delay, ...f.params],
    );
    expectAll('fail', res.affectedRows, held);
    await freed();
    return { state: 'delayed', runAt: new Date((h.nowUs + delay) / 1000) };
  });
  slots.ring();
  const before = recovered[0]?.row;
  if (before) return before.phase === PHASE.dead ? { state: 'dead' } : { state: 'delayed', runAt: new Date(before.dueUs / 1000) };
  return result as FailOutcome;
}

/** Gives jobs back without counting the attempt; see `Queue.release`. */
export async function releaseJobs(c: AckContext, refs: readonly JobRef[], delay: number): Promise<void> {
  if (refs.length === 0) return;
  const slots = slotFreer(c);
  const write = async (conn: SqlConnection, jobs: readonly JobRef[]): Promise<number> => {
    const keys = delay > 0 ? await keysOf(conn, c.t, jobs) : []; // released at once, a job keeps its slot
    const f = fence(c.queue, jobs);
    const uncount = '`attempt` = IF(`attempt` > 0, `attempt` - 1, 0)';
    const res =
      delay > 0
        ? await conn.query(
            `${updateById(c.t.jobs)} SET ${uncount}, \`run_at\` = ${NOW_PLUS}, \`due_at\` = ${NOW_PLUS}, \`phase\` = ${PHASE.delayed} WHERE ${f.sql}`,
            [toMicros(delay), toMicros(delay), ...f.params],
          )
        : await conn.query(
            `${updateById(c.t.jobs)} SET ${uncount}, \`due_at\` = \`run_at\`, \`ready_priority\` = \`priority\`, \`phase\` = ${PHASE.ready} WHERE ${f.sql}`,
            f.params,
          );
    if (res.affectedRows === jobs.length) await slots.free(conn, keys);
    return res.affectedRows;
  };
  const fast = await ackFast(c.exec, refs, true, write);
  if (fast.next !== 'applied') {
    const check = { action: 'release', once: true, after: [PHASE.ready, PHASE.delayed], recover: fast.next === 'recover' };
    await ackHeld(c.exec, c.t, c.queue, refs, check, async (conn, held) => {
      expectAll(
        'release',
        await write(
          conn,
          held.map((h) => h.ref),
        ),
        held,
      );
    });
  }
  if (delay === 0) claimCursor(c.exec.state, c.t.jobs, c.queue).rewind(); // back in line at their run time
  slots.ring();
}

/** Moves lease expiries to `ms` milliseconds from now; see `Queue.extend`. */
export async function extendJobs(c: AckContext, refs: readonly JobRef[], ms: number): Promise<Date> {
  const micros = toMicros(ms);
  if (refs.length === 0) {
    const { rows } = await c.exec.query<{ now_us: unknown }>(`SELECT ${NOW_MICROS} AS now_us`);
    return new Date((toNumber(rows[0]?.now_us) + micros) / 1000);
  }
  // Extending again after a lost run is harmless: nothing to recover.
  const check = { action: 'extend', once: false, after: [], recover: false };
  const sentAt = performance.now();
  // Inside the application's transaction an extend is not confirmed before that transaction commits.
  const confirm = (ids: readonly number[]): void => {
    if (!c.exec.client.joined) for (const r of refs) if (ids.includes(r.id)) leaseConfirmed(r, sentAt, micros / 1000);
  };
  const { held } = await ackHeld(c.exec, c.t, c.queue, refs, check, async (conn, held) => {
    const f = fence(
      c.queue,
      held.map((h) => h.ref),
    );
    const res = await conn.query(`${updateById(c.t.jobs)} SET \`due_at\` = ${NOW_PLUS} WHERE ${f.sql}`, [micros, ...f.params]);
    expectAll('extend', res.affectedRows, held);
  }).catch((err: unknown) => {
    if (err instanceof LeaseLostError) confirm(err.applied);
    throw err;
  });
  confirm(held.map((h) => h.ref.id));
  return new Date(((held[0] as HeldRow).nowUs + micros) / 1000);
}
