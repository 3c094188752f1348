import { placeholderList } from '../chunk.js';
import { invalid } from '../errors.js';
import { intArg, show, toNumber } from '../validate.js';
import { deleteById, PHASE, updateById } from './tables.js';
import type { AckContext } from './settle.js';

/** Rows per maintenance statement: short transactions, primary-key writes only. */
const STEP = 1000;

function idsArg(what: string, ids: unknown): number[] {
  if (!Array.isArray(ids)) throw invalid(`${what} ids must be an array of job ids, got ${show(ids)}`);
  return ids.map((id) => intArg(`${what} id`, id, 1));
}

/**
 * Runs `write(ids)` over the ids of the queue's `phase` rows (due ones only with `dueOnly`), read
 * with a plain SELECT of the `claim` index range, where these phases are ordered by due time;
 * STEP at a time, until none is left or `limit` rows were written. Each write is one autocommit
 * statement by primary key that re-checks the phase, so rows that moved meanwhile are left alone.
 */
async function sweep(c: AckContext, phase: number, dueOnly: boolean, limit: number, write: (ids: number[]) => Promise<number>): Promise<number> {
  let total = 0;
  while (total < limit) {
    const { rows } = await c.exec.query<{ id: unknown }>(
      `SELECT \`id\` FROM ${c.t.jobs} FORCE INDEX (\`claim\`) WHERE \`queue\` = ? AND \`phase\` = ${phase} AND \`ready_priority\` = 0` +
        `${dueOnly ? ' AND `due_at` <= UTC_TIMESTAMP(6)' : ''} ORDER BY \`due_at\` LIMIT ${Math.min(STEP, limit - total)}`,
      [c.queue],
    );
    if (rows.length === 0) break;
    const n = await write(rows.map((r) => toNumber(r.id)));
    total += n;
    if (n === 0 && rows.length > 0) break; // every row moved under us; stop rather than spin
  }
  return total;
}

/** Makes dead jobs ready again with attempts reset (their dedup keys stay free). */
export async function retryDeadJobs(c: AckContext, options: { ids?: readonly number[]; limit?: number } = {}): Promise<number> {
  const limit = intArg('retryDead() limit', options.limit ?? Number.MAX_SAFE_INTEGER, 0);
  const write = async (ids: number[]): Promise<number> =>
    (
      await c.exec.query(
        `${updateById(c.t.jobs)} SET \`attempt\` = 0, \`run_at\` = UTC_TIMESTAMP(6), \`due_at\` = UTC_TIMESTAMP(6), \`ready_priority\` = \`priority\`, \`phase\` = ${PHASE.ready}
         WHERE \`id\` IN (${placeholderList(ids.length)}) AND \`queue\` = ? AND \`phase\` = ${PHASE.dead}`,
        [...ids, c.queue],
      )
    ).affectedRows;
  if (options.ids !== undefined) {
    const ids = idsArg('retryDead()', options.ids);
    let n = 0;
    for (let i = 0; i < ids.length; i += STEP) n += await write(ids.slice(i, i + STEP));
    return n;
  }
  return sweep(c, PHASE.dead, false, limit, write);
}

/** Deletes kept finished jobs whose retention has passed. */
export function purgeFinished(c: AckContext): Promise<number> {
  return sweep(c, PHASE.done, true, Number.MAX_SAFE_INTEGER, async (ids) =>
    (await c.exec.query(`${deleteById(c.t.jobs)} WHERE \`id\` IN (${placeholderList(ids.length)}) AND \`phase\` = ${PHASE.done}`, ids)).affectedRows,
  );
}

/** Deletes dead jobs: the given ids, or all of the queue. */
export async function purgeDeadJobs(c: AckContext, options: { ids?: readonly number[] } = {}): Promise<number> {
  const del = async (ids: number[]): Promise<number> =>
    (
      await c.exec.query(
        `${deleteById(c.t.jobs)} WHERE \`id\` IN (${placeholderList(ids.length)}) AND \`queue\` = ? AND \`phase\` = ${PHASE.dead}`,
        [...ids, c.queue],
      )
    ).affectedRows;
  if (options.ids === undefined) return sweep(c, PHASE.dead, false, Number.MAX_SAFE_INTEGER, del);
  const ids = idsArg('purgeDead()', options.ids);
  let n = 0;
  for (let i = 0; i < ids.length; i += STEP) n += await del(ids.slice(i, i + STEP));
  return n;
}
