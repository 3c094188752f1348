import { invalid } from './errors.js';

/** An integer count in [min, max]; rejects NaN, fractions, strings and infinities, naming the value. */
export function intArg(what: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${what} must be an integer from ${min} to ${max}, got ${show(value)}`);
  }
  return value;
}

/** A finite number of seconds in [min, max] (fractions allowed); rejects NaN and infinities. */
export function secondsArg(what: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalid(`${what} must be a finite number of seconds from ${min} to ${max}, got ${show(value)}`);
  }
  return value;
}

/** A boolean option; rejects anything else rather than coercing. */
export function boolArg(what: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalid(`${what} must be true or false, got ${show(value)}`);
  return value;
}

/** Renders a value for an error message without dumping huge strings. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return typeof value;
}

/** A number from a driver value that may be a number, bigint or numeric string. */
export function toNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint' || typeof value === 'string') return Number(value);
  if (value === null || value === undefined) return 0;
  throw new TypeError(`not a number: ${show(value)}`);
}
