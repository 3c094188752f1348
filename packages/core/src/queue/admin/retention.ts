import { placeholderList } from '../../chunk.js';
import { toNumber } from '../../validate.js';
import { deleteById, epochMicros, PHASE } from '../model/tables.js';
import type { QueueSettings } from '../model/options.js';
import type { AckContext } from '../settle/context.js';
import { deleteDead, sweep, type IndexPosition } from './dead.js';

/** The retention one `purge()` applies: the handle's settings, with a call's own options over them. */
export type Retention = Pick<QueueSettings, 'keepFinishedCount' | 'keepDeadFor' | 'keepDeadCount'>;

/**
 * The row of `phase` just past the newest `keep` in the `claim` index's order (due time, group,
 * id), or undefined when `keep` or fewer exist: with it, a sweep `upTo` it deletes all but the
 * newest `keep`. One read of the index, skipping `keep` entries.
 */
async function pastNewest(c: AckContext, phase: number, keep: number): Promise<IndexPosition | undefined> {
  const { rows } = await c.exec.query<{ id: unknown; grp: string; due_us: unknown }>(
    `SELECT \`id\`, \`grp\`, ${epochMicros('`due_at`')} AS due_us FROM ${c.t.jobs} FORCE INDEX (\`claim\`)
     WHERE \`queue\` = ? AND \`phase\` = ${phase} AND \`ready_priority\` = 0
     ORDER BY \`due_at\` DESC, \`grp\` DESC, \`id\` DESC LIMIT 1 OFFSET ${keep}`,
    [c.queue],
  );
  const r = rows[0];
  return r === undefined ? undefined : { dueUs: toNumber(r.due_us), grp: r.grp, id: toNumber(r.id) };
}

/** Deletes the finished jobs of `ids` (still finished, of this queue): one primary-key statement. */
const deleteFinished =
  (c: AckContext) =>
  async (ids: number[]): Promise<number> =>
    (
      await c.exec.query(`${deleteById(c.t.jobs)} WHERE \`id\` IN (${placeholderList(ids.length)}) AND \`queue\` = ? AND \`phase\` = ${PHASE.done}`, [
        ...ids,
        c.queue,
      ])
    ).affectedRows;

/** Deletes all but the newest `keep` rows of `phase` with `write`; resolves to the number deleted. */
async function trim(c: AckContext, phase: number, keep: number, write: (ids: number[]) => Promise<number>): Promise<number> {
  const upTo = await pastNewest(c, phase, keep);
  return upTo === undefined ? 0 : sweep(c, phase, { upTo }, Number.MAX_SAFE_INTEGER, write);
}

/**
 * Deletes the queue's finished and dead jobs past their retention, in steps of short
 * primary-key transactions: finished jobs whose `keepFinishedFor` passed, then all but the newest
 * `keepFinishedCount`; dead jobs that died `keepDeadFor` ago or earlier, then all but the newest
 * `keepDeadCount` (their kept dedup keys with them). "Newest" is by the time a job finished or
 * died (for finished jobs, by when they may be purged). Resolves to the number deleted.
 */
export async function purgeRetained(c: AckContext, r: Retention): Promise<number> {
  const finished = deleteFinished(c);
  const dead = deleteDead(c);
  let n = await sweep(c, PHASE.done, { olderThanUs: 0 }, Number.MAX_SAFE_INTEGER, finished);
  if (r.keepFinishedCount !== undefined) n += await trim(c, PHASE.done, r.keepFinishedCount, finished);
  if (r.keepDeadFor !== undefined) n += await sweep(c, PHASE.dead, { olderThanUs: r.keepDeadFor * 1000 }, Number.MAX_SAFE_INTEGER, dead);
  if (r.keepDeadCount !== undefined) n += await trim(c, PHASE.dead, r.keepDeadCount, dead);
  return n;
}
