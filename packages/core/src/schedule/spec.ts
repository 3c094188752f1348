import { invalid } from '../errors.js';
import { validateName } from '../names.js';
import { ENQUEUE_OPTIONS, jobRow, MAX_DELAY_MS, queueSettings, type JobRow, type QueueSettings } from '../queue/model/options.js';
import type { EnqueueOptions } from '../queue/model/types.js';
import { intArg, optionsOf, show, wholeSecondsArg } from '../validate.js';
import { cronOf, timeZoneArg } from './ticks.js';
import type { MissedPolicy, ScheduleJobOptions, ScheduleSpec } from './types.js';

/** The options of each scheduled job: `enqueue()`'s, without `runAt` (the tick is the run time). */
export const SCHEDULE_JOB_OPTIONS = ENQUEUE_OPTIONS.filter((o) => o !== 'runAt');
const SPEC_OPTIONS = ['queue', 'cron', 'tz', 'every', 'payload', 'options', 'missed'] as const;
/** Most jobs one pass enqueues for the missed ticks of one schedule (`missed: { each }`). */
export const MAX_MISSED_EACH = 1000;
/** The longest interval, in milliseconds: 10 years, the longest delay. */
export const MAX_EVERY_MS = MAX_DELAY_MS;

/** Settings of scheduled jobs: the Queue's defaults (a schedule's `options.maxAttempts` overrides). */
export const SCHEDULE_SETTINGS: QueueSettings = queueSettings(undefined);

/** A validated schedule, ready to become a row. */
export interface ScheduleRow {
  readonly name: string;
  readonly queue: string;
  readonly cron: string | null;
  readonly tz: string | null;
  /** Whole seconds, as stored. */
  readonly every: number | null;
  /** JSON text of the payload. */
  readonly payload: string;
  /** JSON text of the job options. */
  readonly options: string;
  readonly missed: 'skip' | 'once' | 'each';
  readonly missedMax: number;
}

/** A validated missed-tick policy. */
export function missedArg(what: string, value: unknown): { kind: 'skip' | 'once' | 'each'; max: number } {
  if (value === undefined || value === 'once') return { kind: 'once', max: 1 };
  if (value === 'skip') return { kind: 'skip', max: 1 };
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const o = optionsOf(what, value, ['each']);
    return { kind: 'each', max: intArg(`${what}.each`, o['each'], 1, MAX_MISSED_EACH) };
  }
  throw invalid(`${what} must be "skip", "once" or { each: N } (N from 1 to ${MAX_MISSED_EACH}), got ${show(value)}`);
}

/** The policy as the API shows it. */
export const policyOf = (kind: string, max: number): MissedPolicy => (kind === 'each' ? { each: max } : (kind as 'skip' | 'once'));

/**
 * One job of a schedule, validated as `enqueue()` validates it (the Queue's own code), for the
 * given options; MUST throw INVALID_ARGUMENT naming the bad value before any SQL.
 */
export function scheduledJob(payload: unknown, options: unknown, what: string): JobRow {
  const o = optionsOf(`${what} options`, options, SCHEDULE_JOB_OPTIONS) as EnqueueOptions;
  return jobRow(payload, o, SCHEDULE_SETTINGS, what);
}

/** Validates `upsert(name, spec)` whole, before any SQL. */
export function scheduleRow(name: unknown, spec: unknown): ScheduleRow {
  const what = 'schedules.upsert()';
  const n = validateName('schedule name', name);
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) throw invalid(`${what} needs { queue, cron | every, ... }, got ${show(spec)}`);
  const s = optionsOf(what, spec, SPEC_OPTIONS) as unknown as ScheduleSpec;
  const queue = validateName('queue name', s.queue);
  if ((s.cron === undefined) === (s.every === undefined)) {
    throw invalid(`${what} takes exactly one of cron and every, got ${s.cron === undefined ? 'neither' : `cron ${show(s.cron)} and every ${show(s.every)}`}`);
  }
  if (s.every !== undefined && s.tz !== undefined) throw invalid(`${what} tz applies to cron patterns only, got tz ${show(s.tz)} with every`);
  const tz = s.cron === undefined ? null : timeZoneArg(`${what} tz`, s.tz ?? 'UTC');
  if (s.cron !== undefined) cronOf(`${what} cron`, s.cron, tz!);
  const every = s.every === undefined ? null : wholeSecondsArg(`${what} every`, s.every, 1000, MAX_EVERY_MS);
  const job = scheduledJob(s.payload ?? null, s.options, `${what} job`);
  const missed = missedArg(`${what} missed`, s.missed);
  const options = Object.fromEntries(Object.entries(s.options ?? {}).filter(([, v]) => v !== undefined)) as ScheduleJobOptions;
  return {
    name: n,
    queue,
    cron: s.cron === undefined ? null : s.cron,
    tz,
    every,
    payload: job.payload,
    options: JSON.stringify(options),
    missed: missed.kind,
    missedMax: missed.max,
  };
}
