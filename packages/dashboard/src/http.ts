import type { IncomingMessage, ServerResponse } from 'node:http';
import { Refused } from './refused.js';

/** Most bytes of a form body the dashboard reads. */
export const MAX_BODY = 64 * 1024;

/** Security headers of every response: no framing, no sniffing, scripts and styles by nonce only. */
export function securityHeaders(res: ServerResponse, nonce: string): void {
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  );
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('Cache-Control', 'no-store');
}

/** Ends the response with `body`. */
export function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string | string[]> = {}): void {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end(body);
}

/** A body another handler parsed already (Express's `urlencoded()` sets `req.body`), as form fields. */
function parsedBody(req: IncomingMessage): URLSearchParams | undefined {
  const body = (req as IncomingMessage & { body?: unknown }).body;
  if (!req.readableEnded || body === undefined || body === null) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return new URLSearchParams(body.toString());
  if (typeof body !== 'object') return undefined;
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) for (const one of Array.isArray(v) ? v : [v]) if (typeof one === 'string') form.append(k, one);
  return form;
}

/**
 * Reads a urlencoded form body of at most `MAX_BODY` bytes, or the fields another handler already
 * parsed from it. Rejects with `Refused` 415 for another content type, 400 for a body consumed
 * without a parse, and 413 at once for a bigger body: the rest is read and dropped, so the client
 * gets the 413 page instead of a reset connection.
 */
export function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const type = String(req.headers['content-type'] ?? '');
  if (!type.startsWith('application/x-www-form-urlencoded')) {
    return Promise.reject(new Refused(415, `actions take an application/x-www-form-urlencoded form, got ${JSON.stringify(type.slice(0, 80))}`));
  }
  const parsed = parsedBody(req);
  if (parsed) return Promise.resolve(parsed);
  if (req.readableEnded)
    return Promise.reject(new Refused(400, 'the form was read by another handler before the dashboard: mount the dashboard before body parsers'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
      else if (size - c.length <= MAX_BODY) reject(new Refused(413, `The form is larger than ${MAX_BODY.toLocaleString('en-US')} bytes: select fewer jobs.`));
    });
    req.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}

/** Cookies of a request by name. */
export function cookies(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of String(req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0) out.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  return out;
}

/**
 * True when a state-changing request comes from the dashboard's own origin: its `Origin` (or,
 * without one, its `Referer`) names the same host as the request. A request with neither is refused.
 */
export function sameOrigin(req: IncomingMessage): boolean {
  const host = req.headers.host;
  const from = req.headers.origin ?? req.headers.referer;
  if (!host || !from || Array.isArray(from)) return false;
  try {
    return new URL(from).host === host;
  } catch {
    return false;
  }
}
