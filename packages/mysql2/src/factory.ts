import { createTaskrow, InvalidArgumentError, type Taskrow, type TaskrowOptions } from '@taskrow/core';
import { mysql2Client, type Mysql2Client, type Mysql2Connection } from './client.js';

/** What `taskrow()` accepts: a mysql2 promise Pool, PoolConnection or Connection, or a callback-API one. */
export type Mysql2Input = Mysql2Client | { promise(): Mysql2Client };

function unwrap(input: unknown): Mysql2Client {
  let c = input as Record<string, unknown> | null;
  // A callback-API pool or connection (from 'mysql2'): use its promise wrapper.
  if (c && typeof c['promise'] === 'function' && typeof c['then'] !== 'function' && typeof c['execute'] === 'function' && !('connection' in c || 'pool' in c)) {
    c = (c['promise'] as () => Record<string, unknown>).call(c);
  }
  const ok = c && typeof c['query'] === 'function' && (typeof c['getConnection'] === 'function' || typeof c['beginTransaction'] === 'function');
  if (!ok) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      `@taskrow/mysql2 expected a mysql2 Pool, PoolConnection or Connection (mysql2/promise or mysql2), got ${c === null ? 'null' : typeof c}`,
    );
  }
  const closed = (c as { pool?: { _closed?: boolean } }).pool?._closed;
  if (closed) throw new InvalidArgumentError('INVALID_CLIENT', '@taskrow/mysql2 was given a mysql2 pool that has been ended');
  return c as unknown as Mysql2Client;
}

/**
 * Connects taskrow to a mysql2 client the application owns. taskrow never ends that client.
 * Resolves once the server's version is known; rejects with `UNSUPPORTED_SERVER` on servers
 * without SKIP LOCKED, and with `INVALID_CLIENT` when `client` is not a mysql2 client.
 *
 * `tr.in(connection)` binds taskrow to a connection inside the application's open transaction:
 * writes made through it commit or roll back with that transaction.
 */
export async function taskrow(client: Mysql2Input, options?: TaskrowOptions): Promise<Taskrow<Mysql2Connection>> {
  const target = unwrap(client);
  return createTaskrow<Mysql2Connection>({
    client: mysql2Client(target),
    joinTransaction: (tx) => mysql2Client(unwrap(tx), true),
    options,
  });
}
