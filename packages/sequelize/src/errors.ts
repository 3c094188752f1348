import { describeMysql2Error, type DriverErrorInfo } from '@taskrow/core';

type Wrapped = { errno?: unknown; code?: unknown; parent?: unknown; original?: unknown } | null;

/**
 * The mysql2 error behind an error from Sequelize. taskrow's statements run on the mysql2 connection
 * Sequelize lends, so their errors are mysql2's own; only Sequelize's `getConnection()` wraps a
 * failure to connect in a `ConnectionError` whose `parent` (or `original`) is mysql2's error. Told
 * apart by fields, never by message text.
 */
export function driverErrorOf(err: unknown): unknown {
  const e = err as Wrapped;
  if (typeof e !== 'object' || e === null || typeof e.errno === 'number' || typeof e.code === 'string') return err;
  return e.parent ?? e.original ?? err;
}

/**
 * True for an error that carries nothing of a driver: no `errno`, no `code`, no wrapped driver
 * error. Sequelize's `getConnection()` raises such a plain Error only once `sequelize.close()` ran
 * (timeouts and connection failures are `ConnectionError`s with a `parent`).
 */
export function isPlainError(err: unknown): boolean {
  const e = err as Wrapped;
  return typeof e === 'object' && e !== null && e.errno === undefined && e.code === undefined && e.parent === undefined && e.original === undefined;
}

/**
 * Reads an error from taskrow over Sequelize: the mysql2 error (see `driverErrorOf`) by its
 * `errno`, `code` and `fatal` fields through core's `describeMysql2Error`; never by message text.
 * `closed` says whether the error was found to come from a closed Sequelize instance.
 */
export function describeSequelizeError(err: unknown, closed: (err: unknown) => boolean): DriverErrorInfo {
  return describeMysql2Error(driverErrorOf(err), () => closed(err));
}
