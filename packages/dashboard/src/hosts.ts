import { isIP } from 'node:net';
import { InvalidArgumentError } from '@taskrow/core';

const HOST_HEADER = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const NAME = /^\.?[a-z0-9-]+(?:\.[a-z0-9-]+)*$/;

/** The host name of a `Host` header, lower case, without port, brackets or a trailing dot; undefined when malformed. */
export function hostName(header: string | undefined): string | undefined {
  if (header === undefined || !HOST_HEADER.test(header)) return undefined;
  const name = header.startsWith('[') ? header.slice(1, header.indexOf(']')) : header.replace(/:\d+$/, '');
  return name.toLowerCase().replace(/\.$/, '');
}

/** True for names no DNS answer can point elsewhere: `localhost`, `*.localhost` and IP addresses. */
const alwaysAllowed = (name: string): boolean => name === 'localhost' || name.endsWith('.localhost') || isIP(name) !== 0;

function entryOf(value: unknown): string {
  const text =
    typeof value === 'string'
      ? value
          .trim()
          .toLowerCase()
          .replace(/^\[(.*)\]$/, '$1')
      : '';
  if (isIP(text) === 0 && !NAME.test(text)) {
    throw new InvalidArgumentError(
      'INVALID_ARGUMENT',
      `dashboardHandler() allowedHosts entries must be host names like 'dash.example.com' or '.example.com', got ${JSON.stringify(value)}`,
    );
  }
  return text;
}

/**
 * The `allowedHosts` option as a test of a request's `Host` header: `true` allows every host;
 * otherwise `localhost`, `*.localhost`, any IP address and the listed names pass (a name starting
 * with a dot also passes its subdomains). MUST refuse a malformed header and anything else, so a
 * page cannot be read through a DNS name rebound to this server.
 */
export function hostCheck(value: unknown): (header: string | undefined) => boolean {
  if (value === true) return () => true;
  if (value !== undefined && !Array.isArray(value)) {
    throw new InvalidArgumentError('INVALID_ARGUMENT', `dashboardHandler() allowedHosts must be an array of host names or true, got ${typeof value}`);
  }
  const names = (Array.isArray(value) ? (value as unknown[]) : []).map(entryOf);
  return (header) => {
    const name = hostName(header);
    if (name === undefined) return false;
    return alwaysAllowed(name) || names.some((n) => n === name || (n.startsWith('.') && (name === n.slice(1) || name.endsWith(n))));
  };
}
