import mysql from 'mysql2/promise';
import { redactUrl } from '@taskrow/core';
import { shortVersion } from './version.js';

/** Connects once to `url` and returns `SELECT VERSION()`. Rejects if the server does not answer. */
export async function readVersion(url: string, connectTimeoutMs = 5000): Promise<string> {
  const conn = await mysql.createConnection({ uri: url, connectTimeout: connectTimeoutMs });
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
    const v = rows[0]?.['v'];
    if (typeof v !== 'string') throw new Error(`SELECT VERSION() returned ${String(v)}`);
    shortVersion(v);
    return v;
  } finally {
    await conn.end().catch(() => undefined);
  }
}

/** Polls `url` until it answers or `timeoutMs` passes; `alive()` false aborts the wait early. */
export async function waitForServer(url: string, timeoutMs: number, alive: () => string | null): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    const dead = alive();
    if (dead !== null) throw new Error(dead);
    try {
      return await readVersion(url, 1000);
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`server at ${redact(url)} did not answer within ${timeoutMs} ms: ${String(last)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The URL with its password replaced by `***`, for messages (see `redactUrl`). */
export const redact = redactUrl;
