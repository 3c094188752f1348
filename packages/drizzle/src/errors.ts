import { describeMysql2Error, type DriverErrorInfo } from '@taskrow/core';

/**
 * The mysql2 error behind an error from Drizzle. Drizzle (0.44+) wraps a failed statement's driver
 * error in a `DrizzleQueryError` (fields `query`, `params` and `cause`, the mysql2 error); older
 * versions, and Drizzle's transaction calls for the connection they borrow, pass mysql2's error
 * through. Told apart by fields, never by message text.
 */
export function driverErrorOf(err: unknown): unknown {
  const e = err as { query?: unknown; params?: unknown; cause?: unknown } | null;
  const wrapped = typeof e === 'object' && e !== null && typeof e.query === 'string' && Array.isArray(e.params) && e.cause !== undefined;
  return wrapped ? e.cause : err;
}

/**
 * Reads an error from Drizzle's mysql2 driver: the mysql2 error behind it (see `driverErrorOf`) by
 * its `errno`, `code` and `fatal` fields, through core's `describeMysql2Error`; never by message
 * text. `closed` is the state of the mysql2 client the Drizzle database was made over, since
 * mysql2's "Pool is closed" carries no code.
 */
export function describeDrizzleError(err: unknown, closed: () => boolean): DriverErrorInfo {
  return describeMysql2Error(driverErrorOf(err), closed);
}
