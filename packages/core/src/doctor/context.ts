import type { Executor } from '../engine/executor.js';
import { TaskrowError } from '../errors.js';
import type { DoctorCheck, DoctorStatus } from './types.js';

/** The bound on each of the doctor's statements, in milliseconds. */
export const CHECK_TIMEOUT_MS = 5000;

/** What every check reads from: the executor (each statement bounded, one attempt), the prefix and the server's variables. */
export interface DoctorContext {
  /** The instance's executor: one attempt per statement, each bounded by `CHECK_TIMEOUT_MS`. */
  readonly exec: Executor;
  readonly prefix: string;
  /** `SHOW VARIABLES` (session values, falling back to global), by lower-case name. */
  readonly vars: ReadonlyMap<string, string>;
  /** The instance's own statement timeout, in milliseconds (`TaskrowOptions.statementTimeout`). */
  readonly statementTimeoutMs: number;
}

/** A check's result; `fix` and `details` are left out when undefined. */
export function result(id: string, status: DoctorStatus, summary: string, fix?: string, details?: Record<string, unknown>): DoctorCheck {
  return { id, status, summary, ...(fix === undefined ? {} : { fix }), ...(details === undefined ? {} : { details }) };
}

/** The worst of `statuses`: fail over warn over ok; skipped only when every one is. */
export function worst(statuses: readonly DoctorStatus[]): DoctorStatus {
  for (const s of ['fail', 'warn', 'ok'] as const) if (statuses.includes(s)) return s;
  return 'skipped';
}

/** The server's error number of `err` (a `TaskrowError`, or a driver error as the adapter reads it), when it came from the server. */
export const errnoOf = (ctx: DoctorContext, err: unknown): number | undefined =>
  err instanceof TaskrowError ? err.errno : ctx.exec.client.describeError(err).errno;

/** A whole number from a variable's text, or undefined. */
export function varNumber(ctx: DoctorContext, name: string): number | undefined {
  const raw = ctx.vars.get(name);
  const n = raw === undefined ? Number.NaN : Number(raw);
  return Number.isFinite(n) ? n : undefined;
}
