import type { Executor } from '../../engine/executor.js';
import { toNumber } from '../../validate.js';
import type { QueueTables } from '../model/tables.js';
import { dueSql, pausedSql, ratedSql, readySql } from '../model/gate.js';

/**
 * Whether a claim of `queue` (of `group`) could take anything now: the queue is not paused, has a
 * free rate slot when it is rate-limited, and a ready job, a due delayed job or an expired lease
 * exists. One autocommit statement of index-only reads that locks nothing, so an idle worker polls
 * with it instead of a claim transaction (five statements). A race with an enqueue only moves
 * the job to the next poll.
 */
export async function claimable(exec: Executor, t: QueueTables, queue: string, group: string | undefined): Promise<boolean> {
  const { rows } = await exec.query<{ go: unknown }>(
    `SELECT NOT ${pausedSql(t, '?')}
       AND (NOT ${ratedSql(t, '?')}
         OR EXISTS (SELECT 1 FROM ${t.rateSlots} FORCE INDEX (\`free\`) WHERE \`queue\` = ? AND \`free_at\` <= UTC_TIMESTAMP(6)))
       AND (${readySql(t, '?', group !== undefined)} OR ${dueSql(t, exec.dialect.rangeEndStops, '?')}) AS go`,
    group === undefined ? [queue, queue, queue, queue, queue] : [queue, queue, queue, queue, group, queue],
  );
  return toNumber(rows[0]?.go) === 1;
}
