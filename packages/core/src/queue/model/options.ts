import { invalid, InvalidArgumentError } from '../../errors.js';
import { encodeKey } from '../../keys.js';
import { validateName } from '../../names.js';
import { intArg, msArg, optionsOf, show } from '../../validate.js';
import { encodePayloadSized } from './payload.js';
import type { ClaimOptions, EnqueueOptions, QueueOptions } from './types.js';
import { PHASE } from './tables.js';

/** The longest concurrency key, in characters. */
export const MAX_CONCURRENCY_KEY_CHARS = 128;

/** Checks a concurrency key: a non-empty, well-formed string of at most `MAX_CONCURRENCY_KEY_CHARS` characters. */
export function concurrencyKeyArg(what: string, value: unknown): string {
  const ok =
    typeof value === 'string' &&
    value.length > 0 &&
    [...value].length <= MAX_CONCURRENCY_KEY_CHARS &&
    (value as string & { isWellFormed(): boolean }).isWellFormed();
  if (!ok) {
    throw new InvalidArgumentError('INVALID_KEY', `${what} must be a non-empty string of at most ${MAX_CONCURRENCY_KEY_CHARS} characters, got ${show(value)}`);
  }
  return value as string;
}

/** The longest lease, delay or retention, in milliseconds: 7 days for leases, 10 years for delays. */
export const MAX_LEASE_MS = 7 * 24 * 3600 * 1000;
export const MAX_DELAY_MS = 10 * 365 * 24 * 3600 * 1000;
/** Most jobs one claim returns. */
export const MAX_CLAIM = 1000;
export const MAX_ATTEMPTS = 1000;
/** A job's priority runs from `MIN_PRIORITY` to `MAX_PRIORITY` (a SMALLINT); lower runs first. */
export const MIN_PRIORITY = -32768;
export const MAX_PRIORITY = 32767;

/** The ranges `enqueue()` accepts for its numeric options, for callers that check input before calling it. */
export const ENQUEUE_LIMITS = {
  priority: { min: MIN_PRIORITY, max: MAX_PRIORITY },
  maxAttempts: { min: 1, max: MAX_ATTEMPTS },
  delayMs: { min: 0, max: MAX_DELAY_MS },
} as const;
/** Last errors are cut to this many characters. */
export const MAX_ERROR_CHARS = 4000;

/** Resolved settings of a queue handle. */
export interface QueueSettings {
  readonly maxAttempts: number;
  /** Milliseconds, as every duration here. */
  readonly backoffBase: number;
  readonly backoffMax: number;
  readonly keepFinishedFor: number;
  /** Retention by count and of dead jobs; undefined: no limit (see `QueueOptions`). */
  readonly keepFinishedCount: number | undefined;
  readonly keepDeadFor: number | undefined;
  readonly keepDeadCount: number | undefined;
}

/** The most jobs a retention count keeps. */
export const MAX_KEEP_COUNT = 1_000_000_000;

/** The retention options of `what` (a handle's or one `purge()` call's), each checked; undefined where not given. */
export function retentionArgs(
  what: string,
  o: { keepFinishedCount?: unknown; keepDeadFor?: unknown; keepDeadCount?: unknown },
): Pick<QueueSettings, 'keepFinishedCount' | 'keepDeadFor' | 'keepDeadCount'> {
  const count = (name: string, v: unknown): number | undefined => (v === undefined ? undefined : intArg(`${what} ${name}`, v, 0, MAX_KEEP_COUNT));
  return {
    keepFinishedCount: count('keepFinishedCount', o.keepFinishedCount),
    keepDeadFor: o.keepDeadFor === undefined ? undefined : msArg(`${what} keepDeadFor`, o.keepDeadFor, 0, MAX_DELAY_MS),
    keepDeadCount: count('keepDeadCount', o.keepDeadCount),
  };
}

/** The retention one `purge(options)` applies: the call's options (each checked) over the handle's settings `s`. */
export function purgeRetention(s: QueueSettings, options: unknown): Pick<QueueSettings, 'keepFinishedCount' | 'keepDeadFor' | 'keepDeadCount'> {
  const own = retentionArgs('purge()', optionsOf('purge()', options, ['keepFinishedCount', 'keepDeadFor', 'keepDeadCount']));
  return {
    keepFinishedCount: own.keepFinishedCount ?? s.keepFinishedCount,
    keepDeadFor: own.keepDeadFor ?? s.keepDeadFor,
    keepDeadCount: own.keepDeadCount ?? s.keepDeadCount,
  };
}

/** Whether `s` asks `purge()` for anything: finished jobs kept, or a limit on dead ones. */
export const hasRetention = (s: QueueSettings): boolean => s.keepFinishedFor > 0 || s.keepDeadFor !== undefined || s.keepDeadCount !== undefined;

/** One validated job, ready to become a row. */
export interface JobRow {
  readonly payload: string;
  readonly payloadBytes: number;
  readonly group: string;
  readonly priority: number;
  readonly maxAttempts: number;
  /** `YYYY-MM-DD HH:MM:SS.ffffff` (UTC) or null for "now". */
  readonly runAt: string | null;
  /** Microseconds added to `runAt` (or now). */
  readonly delayMicros: number;
  /** True when the job starts delayed (a delay or a run time was given). */
  readonly delayed: boolean;
  readonly dedup: Buffer | null;
  /** The concurrency key, or null. */
  readonly concKey: string | null;
}

/**
 * A new job's `phase`, `priority` and `ready_priority`, in that order. A job with a delay or a
 * concurrency key starts delayed (a keyed one waits there until a claim admits it, see
 * `limits.ts`), with a ready priority of 0; any other starts ready.
 */
export function startState(row: JobRow): [phase: number, priority: number, readyPriority: number] {
  const waits = row.delayed || row.concKey !== null;
  return [waits ? PHASE.delayed : PHASE.ready, row.priority, waits ? 0 : row.priority];
}

/** A lease or other duration that must be more than 0 milliseconds, at most `max`. */
export function positiveMs(what: string, value: unknown, max: number): number {
  const ms = msArg(what, value, 0, max);
  if (ms <= 0) throw invalid(`${what} must be more than 0 milliseconds, got ${show(value)}`);
  return ms;
}

/** Whole microseconds of `ms` milliseconds. */
export const toMicros = (ms: number): number => Math.round(ms * 1000);

export function queueSettings(options: QueueOptions | undefined): QueueSettings {
  const o = optionsOf('queue()', options, ['maxAttempts', 'backoff', 'keepFinishedFor', 'keepFinishedCount', 'keepDeadFor', 'keepDeadCount']) as QueueOptions;
  optionsOf('queue() backoff', o.backoff, ['base', 'max']);
  const base = msArg('backoff.base', o.backoff?.base ?? 1000, 0, MAX_DELAY_MS);
  const max = msArg('backoff.max', o.backoff?.max ?? 3_600_000, 0, MAX_DELAY_MS);
  if (max < base) throw invalid(`backoff.max (${max}) must not be less than backoff.base (${base})`);
  return {
    maxAttempts: intArg('maxAttempts', o.maxAttempts ?? 5, 1, MAX_ATTEMPTS),
    backoffBase: base,
    backoffMax: max,
    keepFinishedFor: msArg('keepFinishedFor', o.keepFinishedFor ?? 0, 0, MAX_DELAY_MS),
    ...retentionArgs('queue()', o),
  };
}

function utcDatetime(what: string, d: unknown): string {
  if (!(d instanceof Date) || Number.isNaN(d.getTime())) throw invalid(`${what} must be a valid Date, got ${show(d)}`);
  const y = d.getUTCFullYear();
  if (y < 1970 || y > 9999) throw invalid(`${what} must be between the years 1970 and 9999, got ${d.toISOString()}`);
  return `${d.toISOString().slice(0, 23).replace('T', ' ')}000`;
}

/** The options of `enqueue()` (and of each item of `enqueueMany()`, besides `payload`). */
export const ENQUEUE_OPTIONS = ['runAt', 'delay', 'priority', 'maxAttempts', 'dedupKey', 'group', 'concurrencyKey'] as const;

/** Validates one job's payload and options. MUST throw before any SQL on bad input, naming it. */
export function jobRow(payload: unknown, options: EnqueueOptions | undefined, settings: QueueSettings, what: string): JobRow {
  const o = optionsOf(what, options, ENQUEUE_OPTIONS) as EnqueueOptions;
  if (o.runAt !== undefined && o.delay !== undefined) throw invalid(`${what}: give runAt or delay, not both`);
  const { text, bytes } = encodePayloadSized(payload, `${what} payload`);
  const delay = o.delay === undefined ? 0 : msArg(`${what} delay`, o.delay, 0, MAX_DELAY_MS);
  return {
    payload: text,
    payloadBytes: bytes,
    group: o.group === undefined || o.group === null ? '' : validateName('group', o.group),
    priority: intArg(`${what} priority`, o.priority ?? 0, MIN_PRIORITY, MAX_PRIORITY),
    maxAttempts: intArg(`${what} maxAttempts`, o.maxAttempts ?? settings.maxAttempts, ENQUEUE_LIMITS.maxAttempts.min, MAX_ATTEMPTS),
    runAt: o.runAt === undefined ? null : utcDatetime(`${what} runAt`, o.runAt),
    delayMicros: toMicros(delay),
    delayed: o.runAt !== undefined || delay > 0,
    dedup: o.dedupKey === undefined ? null : encodeKey(o.dedupKey, `${what} dedupKey`).k,
    concKey: o.concurrencyKey === undefined ? null : concurrencyKeyArg(`${what} concurrencyKey`, o.concurrencyKey),
  };
}

/**
 * `jobRow` of a job given no options (the queue's defaults), without the options' checks, for
 * batches of bare payloads. MUST throw before any SQL on a payload `jobRow` refuses.
 */
export function plainJobRow(payload: unknown, settings: QueueSettings, what: string): JobRow {
  const { text, bytes } = encodePayloadSized(payload, `${what} payload`);
  return {
    payload: text,
    payloadBytes: bytes,
    group: '',
    priority: 0,
    maxAttempts: settings.maxAttempts,
    runAt: null,
    delayMicros: 0,
    delayed: false,
    dedup: null,
    concKey: null,
  };
}

/** Validated claim options. */
export function claimArgs(options: ClaimOptions): { limit: number; leaseMicros: number; group: string | undefined } {
  if (typeof options !== 'object' || options === null) throw invalid(`claim() needs { limit, lease }, got ${show(options)}`);
  optionsOf('claim()', options, ['limit', 'lease', 'group']);
  return {
    limit: intArg('claim() limit', options.limit, 0, MAX_CLAIM),
    leaseMicros: toMicros(positiveMs('claim() lease', options.lease, MAX_LEASE_MS)),
    group: options.group === undefined ? undefined : validateName('group', options.group),
  };
}

/** The error text stored as `last_error`: the stack or message, cut to `MAX_ERROR_CHARS`, well-formed. */
export function errorText(error: unknown): string {
  let text: string;
  if (error instanceof Error) text = error.stack ?? `${error.name}: ${error.message}`;
  else if (typeof error === 'string') text = error;
  else {
    try {
      text = JSON.stringify(error) ?? String(error);
    } catch {
      text = String(error);
    }
  }
  if (text.length > MAX_ERROR_CHARS) text = `${text.slice(0, MAX_ERROR_CHARS - 3)}...`;
  return (text as string & { toWellFormed(): string }).toWellFormed();
}

/** Milliseconds to wait before attempt `attempt + 1`: `base * 2^(attempt-1)` capped at `max`, then between half and all of it. */
export function backoffMs(attempt: number, s: QueueSettings): number {
  const full = Math.min(s.backoffMax, s.backoffBase * 2 ** Math.max(0, attempt - 1));
  return full / 2 + (Math.random() * full) / 2;
}
