import { boolArg, msArg, optionsOf } from '../validate.js';
import type { AcquireOptions } from './types.js';

/** A year, in milliseconds: the longest lease, wait or output lifetime accepted. */
const MAX_MS = 366 * 24 * 3600 * 1000;

/** Acquire settings after validation; durations in milliseconds. */
export interface Settings {
  readonly lease: number;
  readonly wait: number;
  readonly overwrite: boolean;
  readonly outputTtl: number | null;
  readonly autoRefresh: boolean;
}

export const DEFAULT_SETTINGS: Settings = { lease: 60_000, wait: 0, overwrite: true, outputTtl: null, autoRefresh: false };

/** The options of `acquire()`; `job()` also takes `inputs` and `outputs`. */
export const ACQUIRE_OPTIONS = ['lease', 'wait', 'overwrite', 'outputTtl', 'autoRefresh'] as const;
export const JOB_OPTIONS = [...ACQUIRE_OPTIONS, 'inputs', 'outputs'] as const;

/**
 * Merges `over` onto `base`, validating every given field: lease > 0, wait >= 0 (finite, not NaN),
 * outputTtl > 0 or null. MUST throw a `TaskrowError` naming the field (or an option name not in
 * `accepted`) before any SQL runs.
 */
export function settings(base: Settings, over: AcquireOptions | undefined, where: string, accepted: readonly string[] = ACQUIRE_OPTIONS): Settings {
  if (over === undefined) return base;
  optionsOf(where, over, accepted);
  return {
    lease: over.lease === undefined ? base.lease : msArg(`${where} lease`, over.lease, 1, MAX_MS),
    wait: over.wait === undefined ? base.wait : msArg(`${where} wait`, over.wait, 0, MAX_MS),
    overwrite: over.overwrite === undefined ? base.overwrite : boolArg(`${where} overwrite`, over.overwrite),
    outputTtl: over.outputTtl === undefined ? base.outputTtl : over.outputTtl === null ? null : msArg(`${where} outputTtl`, over.outputTtl, 1, MAX_MS),
    autoRefresh: over.autoRefresh === undefined ? base.autoRefresh : boolArg(`${where} autoRefresh`, over.autoRefresh),
  };
}

/** Milliseconds to whole microseconds (at least 1), for `INTERVAL ? MICROSECOND`. */
export function micros(ms: number): number {
  return Math.max(1, Math.round(ms * 1000));
}
