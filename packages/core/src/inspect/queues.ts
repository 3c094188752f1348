import type { Executor } from '../engine/executor.js';
import { validateName } from '../names.js';
import { epochMicros, NOW_MICROS, PHASE, STATE_OF, type JobState, type QueueTables } from '../queue/model/tables.js';
import { toNumber } from '../validate.js';
import { capped } from './args.js';
import type { CappedCount, InspectPage, QueueSummary } from './types.js';

const textOf = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('ascii') : String(v));

/**
 * Queue names after `after`, in order: a loose scan of the `claim` index, one statement per name,
 * each reading one index entry (`queue > ?` then the first row), however many jobs a queue holds.
 * Reads `limit + 1` names so the last page is known as such.
 */
export async function queueNames(exec: Executor, t: QueueTables, after: string | undefined, limit: number): Promise<InspectPage<string>> {
  const names: string[] = [];
  let from = after ?? '';
  while (names.length <= limit) {
    const { rows } = await exec.query<{ q: unknown }>(
      `SELECT \`queue\` AS q FROM ${t.jobs} FORCE INDEX (\`claim\`) WHERE \`queue\` > ? ORDER BY \`queue\` LIMIT 1`,
      [from],
    );
    if (!rows[0]) break;
    from = textOf(rows[0].q);
    names.push(from);
  }
  const page = names.slice(0, limit);
  return { items: page, next: names.length > limit ? page[page.length - 1] : undefined };
}

/**
 * Jobs per state of one queue, each counted up to `cap`: one statement of five index range reads
 * of at most `cap + 1` entries each (the `claim` index is led by queue and phase).
 */
async function cappedCounts(exec: Executor, t: QueueTables, queue: string, cap: number): Promise<Record<JobState, CappedCount>> {
  const part = (phase: number): string =>
    `SELECT ${phase} AS phase, COUNT(*) AS n FROM (SELECT 1 AS x FROM ${t.jobs} FORCE INDEX (\`claim\`) WHERE \`queue\` = ? AND \`phase\` = ${phase} LIMIT ${cap + 1}) AS p${phase}`;
  const { rows } = await exec.query<{ phase: unknown; n: unknown }>(
    STATE_OF.map((_, i) => part(i)).join('\nUNION ALL\n'),
    STATE_OF.map(() => queue),
  );
  const counts = Object.fromEntries(STATE_OF.map((s) => [s, capped(0, cap)])) as Record<JobState, CappedCount>;
  for (const r of rows) counts[STATE_OF[toNumber(r.phase)]!] = capped(toNumber(r.n), cap);
  return counts;
}

/**
 * The age of the oldest runnable job, as `Queue.stats()` defines it, in one statement: the
 * earliest due time among ready jobs is read per ready priority with a loose index scan (about two
 * index entries per distinct priority, not one per job); due delayed jobs and expired leases are a
 * range of the index bounded by the database clock (those a claim has not yet made ready).
 */
async function oldestRunnableAge(exec: Executor, t: QueueTables, queue: string): Promise<number | null> {
  const { rows } = await exec.query<{ ready_us: unknown; wait_us: unknown; now_us: unknown }>(
    `SELECT (SELECT ${epochMicros('MIN(r.m)')} FROM (SELECT MIN(\`due_at\`) AS m FROM ${t.jobs} FORCE INDEX (\`claim\`)
              WHERE \`queue\` = ? AND \`phase\` = ${PHASE.ready} GROUP BY \`queue\`, \`phase\`, \`ready_priority\`) AS r) AS ready_us,
            (SELECT ${epochMicros('MIN(`run_at`)')} FROM ${t.jobs} FORCE INDEX (\`claim\`)
              WHERE \`queue\` = ? AND \`phase\` IN (${PHASE.delayed}, ${PHASE.running}) AND \`ready_priority\` = 0 AND \`due_at\` <= UTC_TIMESTAMP(6)) AS wait_us,
            ${NOW_MICROS} AS now_us`,
    [queue, queue],
  );
  const r = rows[0];
  if (!r) return null;
  const since = [r.ready_us, r.wait_us].filter((v) => v !== null && v !== undefined).map(toNumber);
  return since.length === 0 ? null : Math.max(0, (toNumber(r.now_us) - Math.min(...since)) / 1000);
}

/** One queue's summary: two statements (capped counts, oldest runnable age). Validates the name first. */
export async function queueSummary(exec: Executor, t: QueueTables, name: unknown, cap: number): Promise<QueueSummary> {
  const queue = validateName('queue name', name);
  const counts = await cappedCounts(exec, t, queue, cap);
  return { name: queue, counts, oldestRunnableAge: await oldestRunnableAge(exec, t, queue) };
}
