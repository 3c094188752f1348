import { describeMysql2Error, type DriverErrorInfo } from '@taskrow/core';

/**
 * The mysql2 error behind an error from TypeORM: a failed statement is a `QueryFailedError` whose
 * `driverError` is mysql2's error (TypeORM also copies its fields onto itself); anything else
 * (BEGIN's and COMMIT's connection errors) arrives as it is. Told apart by fields, never by message text.
 */
export function driverErrorOf(err: unknown): unknown {
  const e = err as { driverError?: unknown } | null;
  return typeof e === 'object' && e !== null && typeof e.driverError === 'object' && e.driverError !== null ? e.driverError : err;
}

/**
 * Reads an error from TypeORM's mysql driver: the mysql2 error behind it (see `driverErrorOf`) by
 * its `errno`, `code` and `fatal` fields, through core's `describeMysql2Error`; never by message
 * text. `closed` is the DataSource's own state (`isInitialized` false after `destroy()`).
 */
export function describeTypeormError(err: unknown, closed: () => boolean): DriverErrorInfo {
  return describeMysql2Error(driverErrorOf(err), closed);
}
