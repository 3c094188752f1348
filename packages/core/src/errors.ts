/** Every code a `TaskrowError` can carry. Stable: callers switch on these. */
export type TaskrowErrorCode =
  | 'INVALID_ARGUMENT'
  | 'INVALID_NAME'
  | 'INVALID_KEY'
  | 'INVALID_CLIENT'
  | 'UNSUPPORTED_SERVER'
  | 'SCHEMA_MISSING'
  | 'SCHEMA_TOO_NEW'
  | 'CLIENT_CLOSED'
  | 'CONNECTION_LOST'
  | 'RETRIES_EXHAUSTED'
  | 'DATABASE_ERROR'
  | 'NOT_FOUND'
  | 'LEASE_LOST'
  | 'RESOURCE_UNAVAILABLE'
  | 'TIMEOUT';

/**
 * The base of every error taskrow's public functions throw (bad input included: no TypeError or
 * RangeError escapes for it). `code` says what happened; `cause` keeps the driver error.
 */
export class TaskrowError extends Error {
  override readonly name: string = 'TaskrowError';
  readonly code: TaskrowErrorCode;
  /** The server's error number when the error came from the server. */
  readonly errno: number | undefined;

  constructor(code: TaskrowErrorCode, message: string, options?: { cause?: unknown; errno?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.errno = options?.errno;
  }
}

/** A value the caller passed is not acceptable; nothing was written. */
export class InvalidArgumentError extends TaskrowError {
  override readonly name = 'InvalidArgumentError';
  constructor(code: 'INVALID_ARGUMENT' | 'INVALID_NAME' | 'INVALID_KEY' | 'INVALID_CLIENT', message: string) {
    super(code, message);
  }
}

/** The server lacks a feature taskrow needs (for example SKIP LOCKED); raised at connect time. */
export class UnsupportedServerError extends TaskrowError {
  override readonly name = 'UnsupportedServerError';
  constructor(message: string) {
    super('UNSUPPORTED_SERVER', message);
  }
}

/** The server answered with an error, or the connection failed; `code` tells which. */
export class DatabaseError extends TaskrowError {
  override readonly name = 'DatabaseError';
}

/** Shorthand for the argument errors every entry point raises. */
export function invalid(message: string): InvalidArgumentError {
  return new InvalidArgumentError('INVALID_ARGUMENT', message);
}

/** Whether `err` says the application's client was closed (ended pool): nothing can run through it any more. */
export function isClientClosed(err: unknown): boolean {
  return err instanceof TaskrowError && err.code === 'CLIENT_CLOSED';
}
