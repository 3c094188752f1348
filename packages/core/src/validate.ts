import { invalid, TaskrowError } from './errors.js';

/** An integer count in [min, max]; rejects NaN, fractions, strings and infinities, naming the value. */
export function intArg(what: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${what} must be an integer from ${min} to ${max}, got ${show(value)}`);
  }
  return value;
}

/**
 * A duration: a finite number of milliseconds in [min, max] (fractions allowed). MUST reject NaN,
 * infinities and anything not a number with `INVALID_ARGUMENT`, naming the value and the limits.
 */
export function msArg(what: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalid(`${what} must be a finite number of milliseconds from ${count(min)} to ${count(max)}, got ${show(value)}`);
  }
  return value;
}

/**
 * A duration kept in whole seconds, given in milliseconds: a multiple of 1000 in [min, max]
 * milliseconds. Resolves to the seconds. MUST reject anything else with `INVALID_ARGUMENT`,
 * naming the value and the limits.
 */
export function wholeSecondsArg(what: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value % 1000 !== 0 || value < min || value > max) {
    throw invalid(`${what} must be whole seconds in milliseconds (a multiple of 1000) from ${count(min)} to ${count(max)}, got ${show(value)}`);
  }
  return value / 1000;
}

/** A number as a limit in a message: with thousands separators (`604,800,000`). */
const count = (n: number): string => n.toLocaleString('en-US');

/** A boolean option; rejects anything else rather than coercing. */
export function boolArg(what: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalid(`${what} must be true or false, got ${show(value)}`);
  return value;
}

/** Renders a value for an error message: its type and (shortened) value, never a huge dump. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value);
  if (typeof value === 'bigint') return `${value}n (a BigInt)`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${String(value)} (a ${typeof value})`;
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'symbol') return `${String(value)} (a symbol)`;
  if (typeof value === 'function') return `a function${value.name ? ` ${value.name}` : ''}`;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value instanceof Date) return `a Date (${Number.isNaN(value.getTime()) ? 'invalid' : value.toISOString()})`;
  const kind = Object.getPrototypeOf(value)?.constructor?.name;
  return kind && kind !== 'Object' ? `a ${kind}` : 'an object';
}

/**
 * Reads an options argument: undefined or a plain object whose keys are all in `allowed`. MUST
 * reject anything else before any SQL, naming an unknown key and every accepted name (a misspelt
 * option would otherwise silently fall back to its default).
 */
export function optionsOf(method: string, options: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(`${method} options must be an object, got ${show(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      throw invalid(`${method} has no option ${JSON.stringify(key)}; its options are ${allowed.length > 0 ? allowed.join(', ') : '(none)'}`);
    }
  }
  return options as Record<string, unknown>;
}

/** A number from a driver value that may be a number, bigint or numeric string. */
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint' || typeof value === 'string') return Number(value);
  if (value === null || value === undefined) return 0;
  throw new TaskrowError('DATABASE_ERROR', `the server returned ${show(value)} where a number was expected`);
}

/** `toNumber`, except that SQL NULL stays null. */
export const toNumberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : toNumber(value));
