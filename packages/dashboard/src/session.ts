import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { cookies } from './http.js';

/** The session cookie's name. */
export const COOKIE = 'taskrow_dashboard';

const mac = (token: string, purpose: string, sid: string): string => createHmac('sha256', token).update(`${purpose}:${sid}`).digest('base64url');

/** Compares two strings in time independent of where they differ. */
export function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Sessions without server state: a session is a random id and its HMAC under the actions token
 * (so only someone who gave the token holds one, and changing the token ends every session); its
 * CSRF token is another HMAC of the id, sent back in every form and checked on every action.
 */
export class Sessions {
  constructor(private readonly token: string) {}

  /** True when `given` is the actions token. */
  tokenMatches(given: string): boolean {
    return same(mac(this.token, 'check', given), mac(this.token, 'check', this.token));
  }

  /** A new session's cookie value. */
  create(): string {
    const sid = randomBytes(18).toString('base64url');
    return `${sid}.${mac(this.token, 'session', sid)}`;
  }

  /** The session id of a request with a valid cookie, else undefined. */
  sessionOf(req: IncomingMessage): string | undefined {
    const value = cookies(req).get(COOKIE);
    if (!value) return undefined;
    const [sid, m] = value.split('.');
    return sid && m && same(m, mac(this.token, 'session', sid)) ? sid : undefined;
  }

  /** The CSRF token of a session. */
  csrf(sid: string): string {
    return mac(this.token, 'csrf', sid);
  }
}
