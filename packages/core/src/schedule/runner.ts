import { epochMicros, NOW_MICROS } from '../sql.js';
import { msArg, optionsOf, show } from '../validate.js';
import { invalid, isClientClosed } from '../errors.js';
import { tickSchedule, type ScheduleContext } from './tick.js';
import type { Scheduler, SchedulerOptions } from './types.js';

/** Schedules one look reads, soonest first. */
const LOOK = 100;

/** How long until each of the soonest schedules is due (database clock; <= 0: due now). */
async function soonest(c: ScheduleContext): Promise<{ name: string; inUs: number }[]> {
  const { rows } = await c.exec.query<{ name: unknown; in_us: unknown }>(
    `SELECT \`name\`, ${epochMicros('`next_at`')} - ${NOW_MICROS} AS in_us FROM ${c.table} WHERE \`next_at\` IS NOT NULL ORDER BY \`next_at\` LIMIT ${LOOK}`,
  );
  return rows.map((r) => ({ name: String(r.name), inUs: Number(r.in_us) }));
}

/**
 * Handles every schedule that is due, in random order (so schedulers starting together spread
 * over different schedules first), and resolves to the jobs enqueued and the microseconds until
 * the next schedule is due (null: none within the look). A schedule whose tick fails (a stored
 * row this build cannot use) MUST NOT hold up the others: the pass goes on without it and then
 * rejects with its error, so the caller reports it and looks again later, not at once.
 */
export async function passOnce(c: ScheduleContext): Promise<{ enqueued: number; waitUs: number | null }> {
  let enqueued = 0;
  const failed = new Map<string, unknown>();
  for (;;) {
    const look = await soonest(c);
    const due = look
      .filter((s) => s.inUs <= 0 && !failed.has(s.name))
      .map((s) => s.name)
      .sort(() => Math.random() - 0.5);
    for (const name of due) {
      try {
        enqueued += await tickSchedule(c, name);
      } catch (err) {
        failed.set(name, err);
      }
    }
    if (due.length > 0) continue;
    if (failed.size > 0) throw [...failed.values()][0];
    return { enqueued, waitUs: look[0]?.inUs ?? null };
  }
}

/** Validated scheduler options. */
function schedulerSettings(options: SchedulerOptions | undefined): { pollMs: number; onError: (e: unknown) => void } {
  const o = optionsOf('schedules.start()', options, ['pollInterval', 'onError']) as SchedulerOptions;
  if (o.onError !== undefined && typeof o.onError !== 'function') throw invalid(`schedules.start() onError must be a function, got ${show(o.onError)}`);
  const pollMs = msArg('schedules.start() pollInterval', o.pollInterval ?? 5000, 10, 3_600_000);
  return { pollMs, onError: o.onError ?? ((e) => console.error('taskrow scheduler:', e)) };
}

/**
 * Runs `passOnce` until stopped: after each pass it sleeps until the soonest `next_at` it read
 * (a wait measured on the database clock, timed locally), at most `pollInterval`. An idle
 * scheduler sends one statement per `pollInterval`. A failed pass is reported to `onError` and
 * retried after `pollInterval`, except when the application's client was closed (`CLIENT_CLOSED`):
 * that is reported once, the scheduler ends, and `stop()` rejects with it.
 */
export function startScheduler(c: ScheduleContext, options: SchedulerOptions | undefined): Scheduler {
  const { pollMs, onError } = schedulerSettings(options);
  let stopped = false;
  let wake: (() => void) | undefined;
  let total = 0;
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => (clearTimeout(timer), resolve());
    });
  const loop = (async () => {
    while (!stopped) {
      let waitMs = pollMs;
      try {
        const pass = await passOnce(c);
        total += pass.enqueued;
        if (pass.waitUs !== null) waitMs = Math.min(pollMs, Math.max(1, Math.ceil(pass.waitUs / 1000)));
      } catch (err) {
        try {
          onError(err);
        } catch {
          // an onError that throws must not stop the scheduler
        }
        if (isClientClosed(err)) throw err; // the application ended its client: nothing more can run
      }
      if (!stopped) await sleep(waitMs);
    }
  })();
  loop.catch(() => undefined); // a closed client's error reaches onError, and stop() rejects with it
  return {
    get enqueued() {
      return total;
    },
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
