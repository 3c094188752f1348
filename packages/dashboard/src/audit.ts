import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { WorkerLogger } from '@taskrow/core';

/** Who asked for an action: a short fingerprint of the browser's session and the client's address. */
export interface Actor {
  /** 12 characters of a hash of the session id (the same for every action of one session; never the cookie). */
  readonly session: string;
  /** The TCP peer (`X-Forwarded-For` is not read). */
  readonly address: string | undefined;
}

/** The actor of a request made in session `sid` (undefined before a session exists). */
export function actorOf(req: IncomingMessage, sid: string | undefined): Actor {
  const session = sid === undefined ? 'none' : createHash('sha256').update(sid).digest('base64url').slice(0, 12);
  return { session, address: req.socket.remoteAddress };
}

/** The logger used when none is given: one line on the console per entry. */
export const CONSOLE_LOGGER: WorkerLogger = {
  info: (obj, msg) => console.info(`${msg ?? ''} ${JSON.stringify(obj)}`),
  warn: (obj, msg) => console.warn(`${msg ?? ''} ${JSON.stringify(obj)}`),
};

/**
 * Logs one action or refusal: who (`session`, `address`), what (`action` and its details) and
 * when (`at`, this process's clock). MUST NOT throw: a logger that throws is ignored.
 */
export function audit(logger: WorkerLogger, level: 'info' | 'warn', actor: Actor, action: string, details: Record<string, unknown>, msg: string): void {
  try {
    logger[level]?.({ dashboard: 'action', action, ...details, session: actor.session, address: actor.address, at: new Date().toISOString() }, msg);
  } catch {
    // a logger that throws must not turn a performed action into an error page
  }
}
