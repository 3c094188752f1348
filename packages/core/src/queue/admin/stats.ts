import type { Executor } from '../../engine/executor.js';
import { toNumber } from '../../validate.js';
import { DUE_ROWS, epochMicros, NOW_MICROS, PHASE, STATE_OF, type JobState, type QueueTables } from '../model/tables.js';
import type { QueueStats } from '../model/types.js';

/**
 * Counts by state, and the age of the oldest runnable job by the database clock: the earliest due
 * time among ready jobs and among due delayed jobs and expired leases not yet made ready (their
 * place in line, `run_at`). Read-only. Index-only scans of the queue's `claim` index range: unlike
 * a claim, their cost grows with the rows the queue holds (counts) and with its ready backlog.
 */
export async function queueStats(exec: Executor, t: QueueTables, queue: string): Promise<Omit<QueueStats, 'pausedAt'>> {
  const counts = Object.fromEntries(STATE_OF.map((s) => [s, 0])) as Record<JobState, number>;
  const byPhase = await exec.query<{ phase: unknown; n: unknown }>(
    `SELECT \`phase\`, COUNT(*) AS n FROM ${t.jobs} FORCE INDEX (\`claim\`) WHERE \`queue\` = ? GROUP BY \`phase\``,
    [queue],
  );
  for (const r of byPhase.rows) {
    const state = STATE_OF[toNumber(r.phase)];
    if (state) counts[state] = toNumber(r.n);
  }
  const ready = await exec.query<{ us: unknown; now_us: unknown }>(
    `SELECT ${epochMicros('MIN(`due_at`)')} AS us, ${NOW_MICROS} AS now_us FROM ${t.jobs} FORCE INDEX (\`claim\`)
     WHERE \`queue\` = ? AND \`phase\` = ${PHASE.ready}`,
    [queue],
  );
  const waiting = await exec.query<{ us: unknown }>(
    `SELECT ${epochMicros('MIN(`run_at`)')} AS us FROM ${t.jobs} FORCE INDEX (\`claim\`)
     WHERE ${DUE_ROWS}`,
    [queue],
  );
  const now = toNumber(ready.rows[0]?.now_us);
  const since = [ready.rows[0]?.us, waiting.rows[0]?.us].filter((v) => v !== null && v !== undefined).map(toNumber);
  return {
    queue,
    counts,
    dead: counts.dead,
    oldestRunnableAge: since.length === 0 ? null : Math.max(0, (now - Math.min(...since)) / 1000),
  };
}
