import { describeMysql2Error, type DriverErrorInfo } from '@taskrow/core';

/** True for an error the driver or the server raised: it carries an `errno` or a `code`. */
export function isDriverError(err: unknown): boolean {
  const e = err as { errno?: unknown; code?: unknown } | null;
  return typeof e === 'object' && e !== null && (typeof e.errno === 'number' || typeof e.code === 'string');
}

/**
 * Reads an error from Kysely's MysqlDialect. Kysely rethrows mysql2's error object (it only
 * extends the stack), so the fields are mysql2's (`errno`, `code`, `fatal`) and are read by
 * core's `describeMysql2Error`; never by message text. `closed` says whether this error was found
 * to come from a destroyed Kysely instance or an ended pool.
 */
export function describeKyselyError(err: unknown, closed: () => boolean): DriverErrorInfo {
  return describeMysql2Error(err, closed);
}
