import type { DriverErrorInfo } from '../port.js';

/** mysql2's codes for a connection that is gone. */
const LOST_CODES = new Set(['PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * Reads an error raised through the mysql2 driver (directly, or passed through by Knex's or
 * Kysely's mysql2 client) by its fields (`errno`, `code`, `fatal`), MUST NOT read message text.
 * `closed` comes from the client's own state, since mysql2's "Pool is closed" error carries no
 * code; when it says true the error is classed closed whatever its fields.
 */
export function describeMysql2Error(err: unknown, closed: () => boolean): DriverErrorInfo {
  const e = (err ?? {}) as { errno?: unknown; code?: unknown; fatal?: unknown };
  const errno = typeof e.errno === 'number' ? e.errno : undefined;
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (closed()) return { errno, code, closed: true };
  const lost = (code !== undefined && LOST_CODES.has(code)) || (e.fatal === true && errno === undefined);
  return { errno, code, lost };
}
