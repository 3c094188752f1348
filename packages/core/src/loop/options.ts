import { boolArg, intArg, optionsOf, wholeSecondsArg } from '../validate.js';

/** The largest duration any loop option takes, in milliseconds: 100 years. */
export const MAX_LOOP_MS = 3_155_760_000_000;
/** The most ids one `get()` returns. */
export const MAX_GET_LIMIT = 100_000;

/** The original's defaults, in seconds: an hour. */
export const DEFAULT_LOCK_FOR = 3600;
export const DEFAULT_MIN_LOOP_TIME = 3600;

function flag(method: string, o: Record<string, unknown>, key: string, fallback: boolean): boolean {
  return o[key] === undefined ? fallback : boolArg(`${method} ${key}`, o[key]);
}

/** A loop duration, given in milliseconds and kept in whole seconds (the table's unit): the seconds. */
function seconds(method: string, o: Record<string, unknown>, key: string, minMs: number, fallback: number): number {
  return o[key] === undefined ? fallback : wholeSecondsArg(`${method} ${key}`, o[key], minMs, MAX_LOOP_MS);
}

/** Options of `remove()`: only `dryRun`. */
export function dryRunOptions(method: string, options: unknown): { dryRun: boolean } {
  const o = optionsOf(method, options, ['dryRun']);
  return { dryRun: flag(method, o, 'dryRun', false) };
}

/** Options of `add()`. */
export function addOptions(options: unknown): { dryRun: boolean; updated: boolean } {
  const o = optionsOf('add()', options, ['updated', 'dryRun']);
  return { dryRun: flag('add()', o, 'dryRun', false), updated: flag('add()', o, 'updated', false) };
}

/** Options of `did()` and `unlock()`; `autoAdd` defaults to true, as the original's `auto_add`. */
export function autoAddOptions(method: string, options: unknown): { dryRun: boolean; autoAdd: boolean } {
  const o = optionsOf(method, options, ['autoAdd', 'dryRun']);
  return { dryRun: flag(method, o, 'dryRun', false), autoAdd: flag(method, o, 'autoAdd', true) };
}

/** Options of `bump()`: `lockFor` may be negative (higher priority) and defaults to 0. */
export function bumpOptions(options: unknown): { dryRun: boolean; autoAdd: boolean; lockFor: number } {
  const o = optionsOf('bump()', options, ['lockFor', 'autoAdd', 'dryRun']);
  return {
    dryRun: flag('bump()', o, 'dryRun', false),
    autoAdd: flag('bump()', o, 'autoAdd', true),
    lockFor: seconds('bump()', o, 'lockFor', -MAX_LOOP_MS, 0),
  };
}

/** `get()`'s arguments. `lockFor` MUST be at least 1 (the original rejects 0 and negatives). */
export function getArgs(limit: unknown, options: unknown): { limit: number; dryRun: boolean; lockFor: number; minLoopTime: number } {
  const o = optionsOf('get()', options, ['lockFor', 'minLoopTime', 'dryRun']);
  return {
    limit: intArg('get() limit', limit, 0, MAX_GET_LIMIT),
    dryRun: flag('get()', o, 'dryRun', false),
    lockFor: seconds('get()', o, 'lockFor', 1000, DEFAULT_LOCK_FOR),
    minLoopTime: seconds('get()', o, 'minLoopTime', -MAX_LOOP_MS, DEFAULT_MIN_LOOP_TIME),
  };
}
