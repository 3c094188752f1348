import { DatabaseError, TaskrowError } from './errors.js';
import type { DriverErrorInfo, SqlClient } from './port.js';

/** How whole operations are retried on retryable server errors. */
export interface RetryOptions {
  /** Attempts in all, the first included. Default 10. */
  readonly attempts: number;
  /** First backoff in ms; doubles each attempt up to `maxDelayMs`, with full jitter. Default 5. */
  readonly baseDelayMs: number;
  /** Default 1000. */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 10, baseDelayMs: 5, maxDelayMs: 1000 };

/**
 * Server errors that mean "run the whole transaction again": deadlock (also Galera's certification
 * failure), lock wait timeout, and MariaDB's snapshot isolation conflict (1020, "Record has changed
 * since last read": a REPEATABLE READ transaction wrote a row committed after its snapshot; on by
 * default from MariaDB 11.6). A fresh transaction takes a fresh snapshot.
 */
const RETRYABLE_ERRNO = new Set([1213, 1205, 1020]);
/** Server errors that mean the connection is gone: gone away, lost, killed, shutting down, idle timeout. */
const LOST_ERRNO = new Set([2006, 2013, 2055, 1053, 1927, 4031, 1158, 1159, 1160, 1161]);
const MISSING_TABLE_ERRNO = new Set([1146]);

/** The kind of failure a driver error is. */
export type ErrorClass = 'retryable' | 'lost' | 'closed' | 'missing-table' | 'other';

/** Classifies a driver error from the adapter's `DriverErrorInfo`. */
export function classify(info: DriverErrorInfo): ErrorClass {
  if (info.closed) return 'closed';
  if (info.errno !== undefined && RETRYABLE_ERRNO.has(info.errno)) return 'retryable';
  if (info.lost || (info.errno !== undefined && LOST_ERRNO.has(info.errno))) return 'lost';
  if (info.errno !== undefined && MISSING_TABLE_ERRNO.has(info.errno)) return 'missing-table';
  return 'other';
}

/** Wraps a driver error into a `TaskrowError` with the right code; `TaskrowError`s pass through. */
export function toTaskrowError(err: unknown, client: SqlClient, attempts = 1): TaskrowError {
  if (err instanceof TaskrowError) return err;
  const info = client.describeError(err);
  const text = err instanceof Error ? err.message : String(err);
  const errno = info.errno;
  switch (classify(info)) {
    case 'closed':
      return new DatabaseError('CLIENT_CLOSED', `the ${client.adapter} client passed to taskrow is closed: ${text}`, { cause: err, errno });
    case 'lost':
      return new DatabaseError('CONNECTION_LOST', `connection lost after ${attempts} attempt(s): ${text}`, { cause: err, errno });
    case 'retryable':
      return new DatabaseError('RETRIES_EXHAUSTED', `gave up after ${attempts} attempt(s) on a retryable error (errno ${errno}): ${text}`, { cause: err, errno });
    case 'missing-table':
      return new DatabaseError('SCHEMA_MISSING', `${text}: run taskrow.migrate() first (or apply taskrow.schemaSql())`, { cause: err, errno });
    default:
      return new DatabaseError('DATABASE_ERROR', text, { cause: err, errno });
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `op` and, when it fails with a deadlock, a lock wait timeout or a lost connection, runs it
 * again from the start: at most `attempts` times, sleeping a random 0..min(max, base * 2^n) ms
 * between tries. MUST NOT retry on a joined client (the application's transaction is already
 * rolled back by the server) nor any other error. Rejects with a `TaskrowError` keeping the driver
 * error as `cause`.
 */
export async function withRetry<T>(client: SqlClient, retry: RetryOptions, op: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (err instanceof TaskrowError) throw err;
      const kind = classify(client.describeError(err));
      const again = !client.joined && (kind === 'retryable' || kind === 'lost') && attempt < retry.attempts;
      if (!again) throw toTaskrowError(err, client, attempt);
      await sleep(Math.random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1)));
    }
  }
}
