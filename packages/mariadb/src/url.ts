import { InvalidArgumentError } from '@taskrow/core';

/** What `mariadbUrl` may add to the connection string. */
export interface MariadbUrlOptions {
  /**
   * Adds `allowPublicKeyRetrieval=true` (unless the URL already sets it or `ssl`): without TLS the
   * `mariadb` driver cannot log in to MySQL 8+ as a `caching_sha2_password` user (MySQL 9 has no
   * other password plugin) unless it may fetch the server's RSA key. Prefer TLS in production: a
   * fetched key can be spoofed by whoever sits between client and server.
   */
  readonly allowPublicKeyRetrieval?: boolean;
}

/**
 * Turns a `mysql://` (or `mariadb://`) connection string into one the `mariadb` driver accepts:
 * the driver rejects every scheme but `mariadb://`. User, password, host, port, database and
 * query options are kept as they are. MUST reject other schemes and strings that are not URLs
 * with `INVALID_ARGUMENT`, without echoing the password.
 */
export function mariadbUrl(url: string, options: MariadbUrlOptions = {}): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidArgumentError('INVALID_ARGUMENT', 'mariadbUrl() expected a mysql:// or mariadb:// URL, got a string that is not a URL');
  }
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') {
    throw new InvalidArgumentError('INVALID_ARGUMENT', `mariadbUrl() expected a mysql:// or mariadb:// URL, got scheme ${JSON.stringify(parsed.protocol)}`);
  }
  // Swap the scheme textually: WHATWG URL refuses to change a special scheme into a non-special one.
  let out = `mariadb:${url.slice(url.indexOf(':') + 1)}`;
  const params = parsed.searchParams;
  if (options.allowPublicKeyRetrieval && !params.has('allowPublicKeyRetrieval') && !params.has('ssl')) {
    out += `${parsed.search ? '&' : '?'}allowPublicKeyRetrieval=true`;
  }
  return out;
}
