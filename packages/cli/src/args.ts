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

/**
 * Parses `argv` strictly: an unknown flag or a missing flag value is a UsageError (exit 2) of one
 * line, naming the flag and, for a misspelt one, the closest flag the command accepts.
 */
export function parse(argv: readonly string[], options: Options = {}): Parsed {
  const all = { ...GLOBAL_OPTIONS, ...options };
  try {
    const { values, positionals } = parseArgs({ args: [...argv], options: all, allowPositionals: true, strict: true });
    return { values: values as Parsed['values'], positionals };
  } catch (err) {
    throw new UsageError(flagProblem(err as Error & { code?: string }, Object.keys(all)));
  }
}

/** The one-line message for a flag `parseArgs` refused. */
function flagProblem(err: Error & { code?: string }, names: readonly string[]): string {
  const unknown = /^Unknown option '([^']+)'/.exec(err.message);
  if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown) {
    const given = unknown[1]!;
    const near = closest(given.replace(/^-+/, ''), names);
    return `unknown option ${given}${near === undefined ? '' : ` (did you mean --${near}?)`}`;
  }
  const missing = /^Option '(-\S+)(?: <value>)?' argument missing/.exec(err.message);
  if (missing) return `${missing[1]} needs a value`;
  const takesNone = /^Option '(-\S+)' does not take an argument/.exec(err.message);
  if (takesNone) return `${takesNone[1]} takes no value`;
  return err.message;
}

/** The name in `names` within edit distance 2 of `given` (or a prefix-extension of it), the nearest first. */
export function closest(given: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const name of names) {
    const d = name.startsWith(given) && given.length >= 3 ? 1 : editDistance(given, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best;
}

/** Levenshtein distance (insertions, deletions and substitutions cost 1). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
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

/** Milliseconds per unit of a duration flag. */
const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration flag in milliseconds, in [min, max], or the default: a number with a unit (`500ms`,
 * `5s`, `2m`, `1h`, `1d`, fractions allowed) or a bare number of milliseconds; negative only
 * where `min` is. A UsageError naming the flag and the range otherwise.
 */
export function durationFlag(values: Parsed['values'], name: string, fallback: number, min: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const m = typeof raw === 'string' ? /^(-?\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(raw.trim()) : null;
  const ms = m ? Number(m[1]) * UNITS[m[2] ?? 'ms']! : Number.NaN;
  if (!Number.isFinite(ms) || ms < min || ms > max) {
    throw new UsageError(
      `--${name} must be a duration from ${min.toLocaleString('en-US')} ms to ${max.toLocaleString('en-US')} ms, such as 500ms, 5s, 2m or 1h (a bare number is milliseconds), got ${JSON.stringify(raw)}`,
    );
  }
  return ms;
}

/** The UsageError for an action `command` does not have, naming the closest one it has. */
export function unknownAction(command: string, given: string, actions: readonly string[]): UsageError {
  const near = closest(given, actions);
  return new UsageError(`unknown ${command} action ${JSON.stringify(given)}${near === undefined ? '' : ` (did you mean ${near}?)`}`);
}

/** The positional at `index`, or a UsageError naming what is missing. */
export function need(positionals: readonly string[], index: number, what: string): string {
  const v = positionals[index];
  if (v === undefined) throw new UsageError(`missing ${what}`);
  return v;
}
