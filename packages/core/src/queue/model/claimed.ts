import { randomInt } from 'node:crypto';
import { epochMicros, NOW_MICROS } from './tables.js';
import type { Job } from './types.js';

/** The names a claimed job is read and handed with, shared by claims, rings and hand-offs. */

/** A job row as a claim reads it. */
export interface ClaimRow {
  id: unknown;
  grp: string;
  conc_key: string | null;
  priority: unknown;
  attempt: unknown;
  max_attempts: unknown;
  token: unknown;
  payload: unknown;
  run_us: unknown;
  due_us: unknown;
  now_us: unknown;
}

/** The columns a claim reads (of the table named `alias`, when given), `run_at` and `due_at` as epoch microseconds. */
export const claimColumns = (alias = ''): string => {
  const c = (name: string): string => `${alias}\`${name}\``;
  return `${['id', 'grp', 'conc_key', 'priority', 'attempt', 'max_attempts', 'token', 'payload'].map((n) => (alias ? `${c(n)} AS \`${n}\`` : c(n))).join(', ')},
  ${epochMicros(c('run_at'))} AS run_us, ${epochMicros(c('due_at'))} AS due_us, ${NOW_MICROS} AS now_us`;
};

/** A new fencing token: random, so that the jobs one claim took can be found by it. */
export const newToken = (): number => randomInt(1, 2 ** 48);

/** Slack (µs) around the window in which a lost claim set its leases' expiry. */
export const WINDOW_SLACK_US = 1_000_000;

/** The jobs a ring handed a sleeper (see `handedJobs`), and where their leases began on the local clock. */
export interface Handed<P> {
  readonly jobs: Job<P>[];
  /** No later than every lease's start (`performance.now()`): a holder counts its lease from here. */
  readonly leaseFrom: number;
}
