import { boolArg, optionsOf, secondsArg } from '../validate.js';
import type { AcquireOptions } from './types.js';

/** A year: the longest lease, wait or output lifetime accepted. */
const MAX_SECONDS = 366 * 24 * 3600;

/** Acquire settings after validation. */
export interface Settings {
  readonly lease: number;
  readonly wait: number;
  readonly overwrite: boolean;
  readonly outputTtl: number | null;
  readonly autoRefresh: boolean;
}

export const DEFAULT_SETTINGS: Settings = { lease: 60, wait: 0, overwrite: true, outputTtl: null, autoRefresh: false };

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
    lease: over.lease === undefined ? base.lease : secondsArg(`${where} lease`, over.lease, 0.001, MAX_SECONDS),
    wait: over.wait === undefined ? base.wait : secondsArg(`${where} wait`, over.wait, 0, MAX_SECONDS),
    overwrite: over.overwrite === undefined ? base.overwrite : boolArg(`${where} overwrite`, over.overwrite),
    outputTtl:
      over.outputTtl === undefined ? base.outputTtl : over.outputTtl === null ? null : secondsArg(`${where} outputTtl`, over.outputTtl, 0.001, MAX_SECONDS),
    autoRefresh: over.autoRefresh === undefined ? base.autoRefresh : boolArg(`${where} autoRefresh`, over.autoRefresh),
  };
}

/** Seconds to whole microseconds, for `INTERVAL ? MICROSECOND`. */
export function micros(seconds: number): number {
  return Math.max(1, Math.round(seconds * 1e6));
}
