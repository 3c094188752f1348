import { Cron } from 'croner';
import { invalid } from '../errors.js';
import { show } from '../validate.js';

/** When a schedule ticks: a cron pattern in a time zone, or every `everyUs` from `anchorUs`. Times are epoch microseconds. */
export type Timing = { readonly cron: Cron } | { readonly everyUs: number; readonly anchorUs: number };

/** A validated time zone: one the runtime's Intl knows (IANA names, `UTC`). */
export function timeZoneArg(what: string, tz: unknown): string {
  if (typeof tz !== 'string' || tz.length === 0 || tz.length > 64)
    throw invalid(`${what} must be an IANA time zone name such as "Europe/Berlin" or "UTC", got ${show(tz)}`);
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw invalid(`${what} must be an IANA time zone name such as "Europe/Berlin" or "UTC", got ${show(tz)}`);
  }
  return tz;
}

/**
 * A parsed cron pattern (5 or 6 fields) in `tz` that has a tick after now (the local clock: a
 * validity check only, no tick decision); MUST throw INVALID_ARGUMENT naming the pattern and croner's reason.
 */
export function cronOf(what: string, pattern: unknown, tz: string): Cron {
  if (typeof pattern !== 'string' || pattern.trim() === '' || pattern.length > 255) {
    throw invalid(`${what} must be a cron pattern of 5 or 6 fields (at most 255 characters), got ${show(pattern)}`);
  }
  let cron: Cron;
  let next: Date | null;
  try {
    cron = new Cron(pattern, { paused: true, timezone: tz, mode: '5-or-6-parts' });
    next = cron.nextRun(); // croner checks the time zone only when it computes a time
  } catch (err) {
    throw invalid(`${what} ${show(pattern)} is not a cron pattern of 5 or 6 fields in time zone ${show(tz)}: ${(err as Error).message}`);
  }
  if (next === null) throw invalid(`${what} ${show(pattern)} has no tick after now (a date that never comes, such as February 30)`);
  return cron;
}

const msOf = (us: number): Date => new Date(Math.floor(us / 1000));

/** The first tick strictly after `afterUs`, or null when there is none. */
export function tickAfter(t: Timing, afterUs: number): number | null {
  if ('everyUs' in t) return afterUs < t.anchorUs ? t.anchorUs : t.anchorUs + (Math.floor((afterUs - t.anchorUs) / t.everyUs) + 1) * t.everyUs;
  const next = t.cron.nextRun(msOf(afterUs));
  return next === null ? null : next.getTime() * 1000;
}

/** What one pass does with a due schedule: jobs for `runs` (ticks, ascending), then `nextUs`. */
export interface TickPlan {
  readonly runs: readonly number[];
  readonly nextUs: number | null;
}

/**
 * The due ticks of a schedule whose next tick `nextUs` is at or before `nowUs` (both database
 * clock): `nextUs` and every later tick up to `nowUs`. Of these, the latest `keep` (ascending) and
 * whether there are more than one.
 */
function dueTicks(t: Timing, nextUs: number, nowUs: number, keep: number): { latest: number[]; several: boolean } {
  if ('everyUs' in t) {
    const last = Math.floor((nowUs - nextUs) / t.everyUs);
    const from = Math.max(0, last - keep + 1);
    return { latest: Array.from({ length: last - from + 1 }, (_, i) => nextUs + (from + i) * t.everyUs), several: last > 0 };
  }
  // Cron ticks are whole seconds: those strictly before now's millisecond + 1 are at or before now.
  const later = t.cron
    .previousRuns(keep, new Date(Math.floor(nowUs / 1000) + 1))
    .map((d) => d.getTime() * 1000)
    .filter((us) => us > nextUs);
  const ticks = [nextUs, ...later.reverse()];
  return { latest: ticks.slice(-keep), several: ticks.length > 1 };
}

/** The plan for a due schedule under its missed-tick policy (`each` = 0 for skip, 1 for once). */
export function planTicks(t: Timing, nextUs: number, nowUs: number, policy: { readonly kind: 'skip' | 'once' | 'each'; readonly max: number }): TickPlan {
  const keep = policy.kind === 'each' ? policy.max : 1;
  const { latest, several } = dueTicks(t, nextUs, nowUs, keep);
  const runs = policy.kind === 'skip' && several ? [] : latest;
  return { runs, nextUs: tickAfter(t, nowUs) };
}
