import type { IncomingMessage, ServerResponse } from 'node:http';

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

/** Reads a urlencoded form body (at most `MAX_BODY` bytes, else rejects). */
export function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    const type = String(req.headers['content-type'] ?? '');
    if (!type.startsWith('application/x-www-form-urlencoded')) {
      reject(new Error('actions take an application/x-www-form-urlencoded form'));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error(`form body over ${MAX_BODY} bytes`));
        req.destroy();
      } else chunks.push(c);
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
