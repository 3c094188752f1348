import { describeMysql2Error, type DriverErrorInfo } from '@taskrow/core';

/**
 * Reads an error from Knex's mysql2 client. Knex passes mysql2's error object through (it only
 * prefixes the message), so the fields are mysql2's (`errno`, `code`, `fatal`) and are read by
 * core's `describeMysql2Error`; never by message text. `closed` is the Knex instance's own state,
 * since Knex's "Unable to acquire a connection" after `destroy()` carries no code.
 */
export function describeKnexError(err: unknown, closed: () => boolean): DriverErrorInfo {
  return describeMysql2Error(err, closed);
}
