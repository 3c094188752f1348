// Flag and environment reading shared by the examples (the taskrow code is in each example).
import { parseArgs } from 'node:util';

/** Bad flags or a missing TASKROW_URL: exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly showUsage = true,
  ) {
    super(message);
  }
}

/** The flags an example accepts (`--help` / `-h` is added). */
export type FlagOptions = Record<string, { readonly type: 'string' | 'boolean'; readonly short?: string }>;

/** The parsed command line: each flag's value when given, and the positional arguments. */
export interface Parsed<O extends FlagOptions> {
  readonly values: { readonly [K in keyof O]?: O[K]['type'] extends 'boolean' ? boolean : string } & { readonly help?: boolean };
  readonly positionals: string[];
}

/**
 * Parses the command line (a leading `--`, as `pnpm start -- ...` passes it, is skipped); unknown
 * flags and more than `maxPositionals` arguments are usage errors.
 */
export function flags<O extends FlagOptions>(options: O, maxPositionals = 0): Parsed<O> {
  const args = process.argv.slice(2);
  if (args[0] === '--') args.shift();
  let parsed: { positionals: string[] };
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.positionals.length > maxPositionals) {
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[maxPositionals])}`);
  }
  return parsed as Parsed<O>;
}

/** The number given as `--name`, or `fallback`; MUST be within `min`..`max` (and whole unless `fraction`). */
export function numberFlag(raw: unknown, name: string, fallback: number, min: number, max: number, fraction = false): number {
  if (raw === undefined) return fallback;
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(n) || n < min || n > max || (!fraction && !Number.isInteger(n))) {
    throw new UsageError(`--${name} must be ${fraction ? 'a number' : 'an integer'} from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/**
 * The database URL (TASKROW_URL, required, `mysql://` or `mariadb://`; never echoed, it may hold a
 * password) and the table prefix (TASKROW_PREFIX, optional).
 */
export function database(): { url: string; options: { prefix?: string } } {
  const url = process.env['TASKROW_URL'];
  if (!url) throw new UsageError('TASKROW_URL is not set: export TASKROW_URL=mysql://user:password@host:3306/database', false);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme !== 'mysql' && scheme !== 'mariadb') {
    throw new UsageError('TASKROW_URL must look like mysql://user:password@host:3306/database (or mariadb://...)', false);
  }
  const prefix = process.env['TASKROW_PREFIX'];
  return { url: `mysql${url.slice(scheme.length)}`, options: prefix === undefined ? {} : { prefix } };
}

/** Runs `main` and sets the exit code: its result, 2 on a usage error (with `usage`), 1 on any other error. */
export function run(name: string, usage: string, main: () => Promise<number>): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(`${name}: ${err instanceof Error ? err.message : String(err)}`);
      if (err instanceof UsageError && err.showUsage) console.error(`\n${usage}`);
      process.exitCode = err instanceof UsageError ? 2 : 1;
    },
  );
}
