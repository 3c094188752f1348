import type { DriverErrorInfo } from '@taskrow/core';

/** The driver numbers its own (client-side) errors from 45000 to 45999; the server's are below. */
const DRIVER_ERRNO_MIN = 45000;
const DRIVER_ERRNO_MAX = 45999;

/** The driver's codes for a connection that is gone, or could not be had: a fresh connection may work. */
const LOST_CODES = new Set([
  'ER_SOCKET_UNEXPECTED_CLOSE',
  'ER_CMD_CONNECTION_CLOSED',
  'ER_CMD_NOT_EXECUTED_DESTROYED',
  'ER_SOCKET',
  'ER_SOCKET_TIMEOUT',
  'ER_CONNECTION_TIMEOUT',
  'ER_PING_TIMEOUT',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);

/** The driver's codes for a pool the application ended. */
const CLOSED_CODES = new Set(['ER_POOL_ALREADY_CLOSED', 'ER_CLOSING_POOL', 'ER_ADD_CONNECTION_CLOSED_POOL']);

/** Using a connection that is already closed: lost on a pool (the next one is fresh), closed on a single connection. */
const ALREADY_CLOSED = 'ER_CONNECTION_ALREADY_CLOSED';

/**
 * Reads a `mariadb` driver error (`SqlError`) by its fields (`errno`, `code`, `fatal`), never by
 * message text. Server errors keep their `errno`; the driver's own errors (45000-45999) are
 * described by `code` alone. `closed` reports the client's own state (`pool.closed`, or a single
 * connection that is no longer valid).
 */
export function describeMariadbError(err: unknown, closed: () => boolean, single: boolean): DriverErrorInfo {
  const e = (err ?? {}) as { errno?: unknown; code?: unknown; fatal?: unknown };
  const rawErrno = typeof e.errno === 'number' ? e.errno : undefined;
  const driverError = rawErrno !== undefined && rawErrno >= DRIVER_ERRNO_MIN && rawErrno <= DRIVER_ERRNO_MAX;
  const errno = driverError ? undefined : rawErrno;
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (closed() || (code !== undefined && CLOSED_CODES.has(code))) return { errno, code, closed: true };
  if (code === ALREADY_CLOSED) return single ? { errno, code, closed: true } : { errno, code, lost: true };
  const lost = (code !== undefined && LOST_CODES.has(code)) || (e.fatal === true && driverError);
  return { errno, code, lost };
}
