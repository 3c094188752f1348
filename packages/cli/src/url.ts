import { redactUrl } from '@taskrow/core';
import { UsageError } from './errors.js';

export { redactUrl };

/**
 * Checks a connection URL (`mysql://` or `mariadb://user:pass@host:port/database`) and returns it
 * in the form mysql2 reads. MUST name what is wrong and MUST NOT echo the password.
 */
export function parseDatabaseUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`not a URL: ${redactUrl(raw)} (expected mysql://user:password@host:port/database)`);
  }
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') {
    throw new UsageError(`unsupported scheme "${u.protocol.replace(/:$/, '')}" in ${redactUrl(raw)}: use mysql:// or mariadb://`);
  }
  if (!u.hostname) throw new UsageError(`no host in ${redactUrl(raw)}`);
  if (u.port && (Number(u.port) < 1 || Number(u.port) > 65535)) throw new UsageError(`bad port in ${redactUrl(raw)}`);
  if (!u.pathname || u.pathname === '/') throw new UsageError(`no database name in ${redactUrl(raw)} (add /database)`);
  u.protocol = 'mysql:';
  return u.toString();
}
