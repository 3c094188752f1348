import { placeholderList } from '../../chunk.js';
import { PHASE, updateById } from '../model/tables.js';
import type { AckContext } from '../settle/context.js';
import { announce } from '../wake/ring.js';

/**
 * Makes the delayed jobs of `ids` that belong to the queue due now, in one statement by primary
 * key: a job without a concurrency key becomes ready (its place in line: now), one with a key
 * stays delayed but due, for the next claim to admit (see `limits.ts`). Then wakes idle workers of
 * this process (`announce`; not inside the application's transaction). Resolves to the number
 * promoted; a run retried after a lost reply counts only what it promoted itself.
 */
export async function promoteJobs(c: AckContext, ids: readonly number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const { affectedRows } = await c.exec.query(
    `${updateById(c.t.jobs)} SET \`run_at\` = UTC_TIMESTAMP(6), \`due_at\` = UTC_TIMESTAMP(6),
       \`ready_priority\` = IF(\`conc_key\` IS NULL, \`priority\`, 0), \`phase\` = IF(\`conc_key\` IS NULL, ${PHASE.ready}, ${PHASE.delayed})
     WHERE \`id\` IN (${placeholderList(ids.length)}) AND \`queue\` = ? AND \`phase\` = ${PHASE.delayed}`,
    [...ids, c.queue],
  );
  announce(c.exec, c.t, c.queue, affectedRows);
  return affectedRows;
}
