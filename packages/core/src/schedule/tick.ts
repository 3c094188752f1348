import { Executor } from '../engine/executor.js';
import type { SqlClient, SqlConnection } from '../port.js';
import { DatabaseError } from '../errors.js';
import { insertJobs } from '../queue/enqueue/enqueue.js';
import { toMicros } from '../queue/model/options.js';
import type { QueueTables } from '../queue/model/tables.js';
import { announce } from '../queue/wake/ring.js';
import { FROM_MICROS } from '../sql.js';
import { missedArg, scheduledJob } from './spec.js';
import { readSchedule, timingOf, type StoredSchedule } from './store.js';
import { planTicks } from './ticks.js';

/** What the scheduler works with: the executor (never a joined one), the schedules table and the Queue's tables. */
export interface ScheduleContext {
  readonly exec: Executor;
  readonly table: string;
  readonly queues: QueueTables;
}

/** `YYYY-MM-DD HH:MM:SS.ffffff` (UTC) of epoch microseconds: a job's `run_at`, to the microsecond. */
function datetimeOf(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')}.${String(us - Math.floor(ms / 1000) * 1e6).padStart(6, '0')}`;
}

/**
 * The executor of the Queue's own enqueue on the connection of the tick's transaction: a joined
 * client, so `insertJobs` adds its rows to that transaction and neither commits nor retries on
 * its own (the tick's transaction is retried whole).
 */
function joinedOn(exec: Executor, conn: SqlConnection): Executor {
  const client: SqlClient = {
    adapter: exec.client.adapter,
    joined: true,
    describeError: (e) => exec.client.describeError(e),
    query: (sql, params) => conn.query(sql, params),
    transaction: (fn) => fn(conn),
  };
  return new Executor(client, exec.dialect, exec.retry, exec.timeoutMs, client, exec.state);
}

/** The jobs for `runs` (ticks, epoch microseconds): run at the tick plus the schedule's delay. */
function jobsOf(s: StoredSchedule, runs: readonly number[]) {
  const { delay, ...options } = JSON.parse(s.options) as { delay?: number };
  const base = scheduledJob(JSON.parse(s.payload), options, `schedule ${JSON.stringify(s.name)} job`);
  const delayMicros = toMicros(delay ?? 0);
  return runs.map((us) => ({ ...base, runAt: datetimeOf(us), delayMicros, delayed: delayMicros > 0 }));
}

/**
 * Enqueues the jobs of the due ticks of schedule `name` and moves its `next_at` past them, both in
 * one transaction, and resolves to the jobs it enqueued. The move is a compare-and-set on the
 * `rev` read in the same transaction: of any number of schedulers handling the same ticks at
 * once, exactly one matches (the others wait for its row lock and then match nothing) and only its
 * enqueue commits; the losers resolve to 0 and enqueue nothing. A run retried after a lost reply
 * reads the row again: when the lost run committed, the tick is no longer due (or `rev` moved)
 * and the retry does nothing, so a lost reply never enqueues a tick twice nor skips it. Every
 * time is the database clock's. A schedule changed between the read and the set (an upsert)
 * loses the set too: its next pass reads the new definition.
 */
export async function tickSchedule(c: ScheduleContext, name: string): Promise<number> {
  const done = await c.exec.transaction(
    async (conn) => {
      const s = await readSchedule(conn, c.table, name, ' AND `next_at` <= UTC_TIMESTAMP(6)');
      if (!s || s.nextUs === null) return undefined;
      const plan = planTicks(timingOf(s), s.nextUs, s.nowUs, missedArg('stored missed', s.missed === 'each' ? { each: s.missedMax } : s.missed));
      const last = plan.runs[plan.runs.length - 1];
      const set = await conn.query(
        `UPDATE ${c.table} SET \`next_at\` = ${plan.nextUs === null ? 'NULL' : FROM_MICROS}, \`last_at\` = ${last === undefined ? '`last_at`' : FROM_MICROS}, \`rev\` = \`rev\` + 1
         WHERE \`name\` = ? AND \`rev\` = ?`,
        [...(plan.nextUs === null ? [] : [plan.nextUs]), ...(last === undefined ? [] : [last]), name, s.rev],
      );
      if (set.affectedRows !== 1) return undefined;
      const out = await insertJobs(joinedOn(c.exec, conn), c.queues, s.queue, jobsOf(s, plan.runs)).catch((err: unknown) => {
        // The joined enqueue does not retry: hand a retryable failure (a deadlock, a cluster's
        // certification conflict) back as it came, so the whole tick's transaction runs again.
        throw err instanceof DatabaseError && err.code === 'RETRIES_EXHAUSTED' && err.cause !== undefined ? err.cause : err;
      });
      return { queue: s.queue, jobs: out.filter((e) => !e.deduplicated).length };
    },
    { isolation: 'READ COMMITTED' },
  );
  if (!done) return 0;
  announce(c.exec, c.queues, done.queue, done.jobs);
  return done.jobs;
}
