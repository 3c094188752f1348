import { DatabaseError, TaskrowError } from './errors.js';
import type { DriverErrorInfo, SqlClient } from './port.js';

/** How whole operations are retried on retryable server errors. */
export interface RetryOptions {
  /**
   * Attempts in all, the first included. Default 10. A run that lost certification on a cluster
   * (`isCertificationFailure`) may go on to `CERTIFICATION_ATTEMPTS_FACTOR` times as many.
   */
  readonly attempts: number;
  /** First backoff in ms; doubles each attempt up to `maxDelayMs`, with full jitter. Default 5. */
  readonly baseDelayMs: number;
  /** Default 1000. */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 10, baseDelayMs: 5, maxDelayMs: 1000 };

/**
 * Server errors that mean "run the whole transaction again": deadlock (also Galera's certification
 * failure), lock wait timeout, MariaDB's snapshot isolation conflict (1020, "Record has changed
 * since last read": a REPEATABLE READ transaction wrote a row committed after its snapshot; on by
 * default from MariaDB 11.6), and Group Replication's certification failure (3101, "Plugin
 * instructed the server to rollback the current transaction", or 1180 at COMMIT). The transaction
 * was rolled back; a fresh one takes a fresh snapshot.
 */
const RETRYABLE_ERRNO = new Set([1213, 1205, 1020, 3101, 1180]);
/**
 * Server errors that mean this connection cannot do the work now, though another may: gone away,
 * lost, killed, shutting down, idle timeout; a Galera node not ready for clients (1047) and a Group
 * Replication member still recovering or read-only (1290).
 */
const LOST_ERRNO = new Set([2006, 2013, 2055, 1053, 1927, 4031, 1158, 1159, 1160, 1161, 1047, 1290]);
/** A table (1146) or a column (1054) this build expects is missing: the schema is older than the build. */
const MISSING_TABLE_ERRNO = new Set([1146, 1054]);
/**
 * A statement stopped by the server while the connection lives on: `KILL QUERY` (1317), MariaDB's
 * `max_statement_time` (1969), MySQL's `max_execution_time` (3024).
 */
const INTERRUPTED_ERRNO = new Set([1317, 1969, 3024]);

/**
 * True when the server interrupted the statement (`INTERRUPTED_ERRNO`). Such a statement was rolled
 * back, but a transaction it ran in was not: MySQL runs no handler of a stored procedure for it, so
 * a `CALL` interrupted inside the procedure's transaction leaves that transaction open (see
 * `SqlClient.endsInterrupted`).
 */
export function isInterrupted(info: DriverErrorInfo): boolean {
  return info.errno !== undefined && INTERRUPTED_ERRNO.has(info.errno);
}

/**
 * A cluster's certification failure is its way of making the second writer of a row wait: the run
 * lost a race to another node and runs again, as on one server it would have waited for the row
 * lock (up to `innodb_lock_wait_timeout`, 50 s by default). Under contention across nodes (claimers
 * on three nodes picking the same queue head) ten quick attempts are not always enough, so such a
 * run gets this many times the attempts; the backoff stays capped at `maxDelayMs`.
 */
export const CERTIFICATION_ATTEMPTS_FACTOR = 3;

/** Errors raised by COMMIT itself, noted by the engine's transaction runner (`noteRaisedAtCommit`). */
const raisedAtCommit = new WeakSet<object>();

/** Notes that `err` was raised by the COMMIT statement of a transaction (the engine's runner calls this). */
export function noteRaisedAtCommit(err: unknown): void {
  if (typeof err === 'object' && err !== null) raisedAtCommit.add(err);
}

/**
 * True for a cluster's certification failure: Group Replication's 3101 wherever it arrives, and a
 * retryable error (1213, 1180) raised by COMMIT itself, which only a cluster gives: InnoDB reports
 * a deadlock when a lock is requested, never at COMMIT; Galera reports a failed certification as
 * 1213 at COMMIT. Galera's abort of a local transaction by a replicated one before its COMMIT looks
 * like a plain deadlock and gets the plain budget. MUST NOT read message text.
 */
export function isCertificationFailure(info: DriverErrorInfo, err: unknown): boolean {
  if (info.errno === 3101) return true;
  return classify(info) === 'retryable' && typeof err === 'object' && err !== null && raisedAtCommit.has(err);
}

/**
 * A unit of work that got no answer within its bound: taskrow abandoned it (and, where the adapter
 * can, destroyed its connection). Retried as a lost connection; never leaves the library as is.
 */
export class NoAnswer extends Error {
  override readonly name = 'NoAnswer';
  constructor(readonly seconds: number) {
    super(`no answer from the server within ${seconds} s; the statement was abandoned and its connection destroyed`);
  }
}

/**
 * Thrown by a unit of work to roll its transaction back on purpose (a fast path that did not
 * apply, say). Passes through the retry loop untouched, never retried nor wrapped; the caller
 * that started the work catches its own subclass. Not part of the public error hierarchy.
 */
export class RollBack extends Error {}

/** The kind of failure a driver error is. */
export type ErrorClass = 'retryable' | 'lost' | 'closed' | 'missing-table' | 'other';

/** Classifies an error of a unit of work: a driver error from the adapter's `DriverErrorInfo`, or `NoAnswer`. */
export function classifyError(client: SqlClient, err: unknown): ErrorClass {
  return err instanceof NoAnswer ? 'lost' : classify(client.describeError(err));
}

/** Classifies a driver error from the adapter's `DriverErrorInfo`. */
export function classify(info: DriverErrorInfo): ErrorClass {
  if (info.closed) return 'closed';
  if (info.errno !== undefined && RETRYABLE_ERRNO.has(info.errno)) return 'retryable';
  if (info.lost || (info.errno !== undefined && LOST_ERRNO.has(info.errno))) return 'lost';
  if (info.errno !== undefined && MISSING_TABLE_ERRNO.has(info.errno)) return 'missing-table';
  return 'other';
}

/** The errors `withRetry` ended work with after an earlier run of that work was lost (see `mayHaveCommitted`). */
const endedAfterLost = new WeakSet<TaskrowError>();

function markAfterLost(err: TaskrowError): TaskrowError {
  endedAfterLost.add(err);
  return err;
}

/**
 * Whether `err` ended work (retried by `withRetry`) one of whose earlier runs lost its connection:
 * that run may have committed, so the work's outcome is unknown whatever the last run's error says
 * (a server error on the retry does not prove that nothing of the work was written).
 */
export function mayHaveCommitted(err: unknown): boolean {
  return err instanceof TaskrowError && endedAfterLost.has(err);
}

/** Wraps a driver error into a `TaskrowError` with the right code; `TaskrowError`s pass through. */
export function toTaskrowError(err: unknown, client: SqlClient, attempts = 1): TaskrowError {
  if (err instanceof TaskrowError) return err;
  if (err instanceof NoAnswer) return new DatabaseError('CONNECTION_LOST', `connection lost after ${attempts} attempt(s): ${err.message}`, { cause: err });
  const info = client.describeError(err);
  const text = err instanceof Error ? err.message : String(err);
  const errno = info.errno;
  switch (classify(info)) {
    case 'closed':
      return new DatabaseError('CLIENT_CLOSED', `the ${client.adapter} client passed to taskrow is closed: ${text}`, { cause: err, errno });
    case 'lost':
      return new DatabaseError('CONNECTION_LOST', `connection lost after ${attempts} attempt(s): ${text}`, { cause: err, errno });
    case 'retryable':
      return new DatabaseError('RETRIES_EXHAUSTED', `gave up after ${attempts} attempt(s) on a retryable error (errno ${errno}): ${text}`, {
        cause: err,
        errno,
      });
    case 'missing-table':
      return new DatabaseError('SCHEMA_MISSING', `${text}: run taskrow.migrate() first (or apply taskrow.schemaSql())`, { cause: err, errno });
    default:
      return new DatabaseError('DATABASE_ERROR', text, { cause: err, errno });
  }
}

/** Which run of a unit of work this is. */
export interface Attempt {
  /** 1 for the first run. */
  readonly number: number;
  /**
   * True when an earlier run failed with a lost connection (or got no answer): it may have
   * committed without the reply reaching taskrow, so a write MUST first look for its own effect.
   */
  readonly afterLost: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `op` and, when it fails with a deadlock, a lock wait timeout or a lost connection
 * (`NoAnswer` included), runs it again from the start: at most `attempts` times (after a
 * certification failure, or any retryable error on a `multiWriter` cluster node, where a replicated
 * write aborts a local transaction with a plain 1213, `CERTIFICATION_ATTEMPTS_FACTOR` times as
 * many), sleeping a random
 * 0..min(max, base * 2^n) ms between tries. MUST NOT retry on a joined client (the application's transaction is already
 * rolled back by the server) nor any other error. Rejects with a `TaskrowError` keeping the driver
 * error as `cause`. `op` learns from its `Attempt` whether an earlier run may have committed.
 */
export async function withRetry<T>(client: SqlClient, retry: RetryOptions, op: (attempt: Attempt) => Promise<T>, multiWriter = false): Promise<T> {
  let afterLost = false;
  for (let attempt = 1; ; attempt++) {
    try {
      return await op({ number: attempt, afterLost });
    } catch (err) {
      if (err instanceof RollBack) throw err;
      if (err instanceof TaskrowError) throw afterLost ? markAfterLost(err) : err;
      const kind = classifyError(client, err);
      const certification = kind === 'retryable' && (multiWriter || isCertificationFailure(client.describeError(err), err));
      const budget = certification ? retry.attempts * CERTIFICATION_ATTEMPTS_FACTOR : retry.attempts;
      const again = !client.joined && (kind === 'retryable' || kind === 'lost') && attempt < budget;
      if (!again) throw afterLost ? markAfterLost(toTaskrowError(err, client, attempt)) : toTaskrowError(err, client, attempt);
      afterLost ||= kind === 'lost';
      await sleep(Math.random() * Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1)));
    }
  }
}
