import { invalid } from '../errors.js';
import { validateName } from '../names.js';
import { intArg, show } from '../validate.js';
import type { InspectPageOptions } from './types.js';

/** Most items per page, and the default. */
export const MAX_INSPECT_PAGE = 200;
const DEFAULT_PAGE = 50;
/** Highest count cap, and the default. */
export const MAX_COUNT_LIMIT = 10_000_000;
export const DEFAULT_COUNT_LIMIT = 100_000;

const ACCEPTED = ['after', 'limit', 'countLimit'] as const;

/** Validated page options. MUST throw before any SQL, naming unknown options and the accepted names. */
export function pageArgs(
  what: string,
  options: InspectPageOptions | undefined,
  accepted: readonly string[] = ACCEPTED,
): { after: string | undefined; limit: number; countLimit: number } {
  const o = (options ?? {}) as Record<string, unknown>;
  if (typeof o !== 'object' || o === null) throw invalid(`${what} options must be an object, got ${show(o)}`);
  for (const k of Object.keys(o)) {
    if (!accepted.includes(k)) throw invalid(`${what} has no option ${JSON.stringify(k)}; accepted: ${accepted.join(', ')}`);
  }
  return {
    after: o['after'] === undefined ? undefined : validateName(`${what} after`, o['after']),
    limit: intArg(`${what} limit`, o['limit'] ?? DEFAULT_PAGE, 1, MAX_INSPECT_PAGE),
    countLimit: intArg(`${what} countLimit`, o['countLimit'] ?? DEFAULT_COUNT_LIMIT, 1, MAX_COUNT_LIMIT),
  };
}

/** A capped count from `n` rows read with `LIMIT cap + 1`. */
export const capped = (n: number, cap: number): { value: number; exact: boolean } => (n > cap ? { value: cap, exact: false } : { value: n, exact: true });
