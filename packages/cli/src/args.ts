import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Flags every command accepts. */
export const GLOBAL_OPTIONS = {
  url: { type: 'string' },
  embedded: { type: 'boolean' },
  engine: { type: 'string' },
  prefix: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

export interface Parsed {
  readonly values: Record<string, string | boolean | undefined>;
  readonly positionals: string[];
}

/** Parses `argv` strictly: an unknown flag or a missing flag value is a UsageError (exit 2). */
export function parse(argv: readonly string[], options: Options = {}): Parsed {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: { ...GLOBAL_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    });
    return { values: values as Parsed['values'], positionals };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** A whole number flag in [min, max], or the default. */
export function intFlag(values: Parsed['values'], name: string, fallback: number, min: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^-?\d+$/.test(raw) || n < min || n > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** A number of seconds (fractions allowed) in [min, max], or the default. */
export function secondsFlag(values: Parsed['values'], name: string, fallback: number, min: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be a number of seconds from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** The positional at `index`, or a UsageError naming what is missing. */
export function need(positionals: readonly string[], index: number, what: string): string {
  const v = positionals[index];
  if (v === undefined) throw new UsageError(`missing ${what}`);
  return v;
}
