import { placeholderList } from '../../chunk.js';
import { invalid } from '../../errors.js';
import { intArg, toNumber } from '../../validate.js';
import { freeSlots } from '../admission/limits.js';
import { deleteById, PHASE } from '../model/tables.js';
import type { AckContext } from '../settle/context.js';
import { announce } from '../wake/ring.js';

/** Most ids one `remove()` or `promote()` takes. */
export const MAX_IDS = 1000;

/**
 * The ids `what` (`remove()`, `promote()`) was given: one id, or an array of at most `MAX_IDS`;
 * duplicates count once. MUST throw `INVALID_ARGUMENT`, naming the value, before any SQL on bad input.
 */
export function jobIdsArg(what: string, ids: unknown): number[] {
  const list: unknown[] = Array.isArray(ids) ? ids : [ids];
  if (list.length > MAX_IDS) throw invalid(`${what} takes at most ${MAX_IDS} ids, got ${list.length}`);
  return [...new Set(list.map((id) => intArg(`${what} id`, id, 1)))];
}

/**
 * Deletes the jobs of `ids` that belong to the queue and have not started: ready, delayed
 * (waiting to run or to retry) or blocked behind their concurrency key. In one READ COMMITTED
 * transaction it locks those rows (a claim skips them: it never waits), deletes them, and frees
 * their concurrency keys' slots, admitting each key's next blocked jobs (`freeSlots`). Deleting a
 * job frees its dedup key. Once committed, idle workers of this process are woken for the jobs
 * admitted (`announce`; not inside the application's transaction). Resolves to the number
 * deleted; a run retried after a lost reply counts only what it deleted itself.
 */
export async function removeJobs(c: AckContext, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  let admitted = 0;
  const removed = await c.exec.transaction(
    async (conn) => {
      const { rows } = await conn.query<{ id: unknown; conc_key: string | null }>(
        `SELECT \`id\`, \`conc_key\` FROM ${c.t.jobs} FORCE INDEX (PRIMARY)
         WHERE \`id\` IN (${placeholderList(ids.length)}) AND \`queue\` = ? AND \`phase\` IN (${PHASE.ready}, ${PHASE.delayed}, ${PHASE.blocked}) FOR UPDATE`,
        [...ids, c.queue],
      );
      if (rows.length === 0) return 0;
      const found = rows.map((r) => toNumber(r.id));
      const n = (await conn.query(`${deleteById(c.t.jobs)} WHERE \`id\` IN (${placeholderList(found.length)})`, found)).affectedRows;
      const keys = [...new Set(rows.flatMap((r) => (r.conc_key === null ? [] : [r.conc_key])))];
      admitted = await freeSlots(conn, c.t, c.queue, keys, c.exec.client.joined);
      return n;
    },
    { isolation: 'READ COMMITTED' },
  );
  announce(c.exec, c.t, c.queue, admitted);
  return removed;
}
