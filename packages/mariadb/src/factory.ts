import { createTaskrow, InvalidArgumentError, type Taskrow, type TaskrowOptions } from '@taskrow/core';
import { isMariadbPool, mariadbClient, type MariadbClient, type MariadbConnection } from './client.js';

const EXPECTED = 'a mariadb Pool, PoolConnection or Connection from the promise API (`import mariadb from "mariadb"`)';

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object' && typeof value !== 'function') return typeof value;
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `a ${name}` : `an object without those methods`;
}

function fn(o: Record<string, unknown>, name: string): boolean {
  return typeof o[name] === 'function';
}

/** A promise Connection / PoolConnection: queries, transactions and `isValid()` (mysql2's have no `isValid`). */
function isConnection(o: Record<string, unknown>): boolean {
  return fn(o, 'query') && fn(o, 'beginTransaction') && fn(o, 'commit') && fn(o, 'rollback') && fn(o, 'isValid');
}

/** A promise Pool: it lends connections and counts them (mysql2's pools do not). */
function isPool(o: Record<string, unknown>): boolean {
  return fn(o, 'query') && fn(o, 'getConnection') && fn(o, 'totalConnections') && 'closed' in o;
}

function checkConnection(c: Record<string, unknown>, what: string): MariadbConnection {
  if (!isConnection(c)) throw new InvalidArgumentError('INVALID_CLIENT', `@taskrow/mariadb ${what} expected ${EXPECTED}, got ${kind(c)}`);
  if (!(c as unknown as MariadbConnection).isValid()) {
    throw new InvalidArgumentError('INVALID_CLIENT', `@taskrow/mariadb ${what} was given a mariadb connection that is closed`);
  }
  return c as unknown as MariadbConnection;
}

/** Checks what `taskrow()` was given; MUST reject anything but an open mariadb promise client. */
function checkClient(input: unknown): MariadbClient {
  const c = (input ?? {}) as Record<string, unknown>;
  if (isPool(c)) {
    if (c['closed'] === true) throw new InvalidArgumentError('INVALID_CLIENT', '@taskrow/mariadb was given a mariadb pool that has been ended');
    return c as unknown as MariadbClient;
  }
  if (isConnection(c)) return checkConnection(c, 'taskrow()');
  throw new InvalidArgumentError('INVALID_CLIENT', `@taskrow/mariadb expected ${EXPECTED}, got ${input === undefined ? 'undefined' : kind(input)}`);
}

/** Checks what `in()` was given: the connection the application's transaction runs on, never a pool. */
function checkTransaction(tx: unknown): MariadbConnection {
  const c = (tx ?? {}) as Record<string, unknown>;
  if (isPool(c)) {
    throw new InvalidArgumentError(
      'INVALID_CLIENT',
      '@taskrow/mariadb in() expected the Connection or PoolConnection your transaction runs on, got a Pool (a pool runs each statement on any connection)',
    );
  }
  return checkConnection(c, 'in()');
}

/**
 * Connects taskrow to a `mariadb` promise client the application owns: a Pool, a PoolConnection
 * or a Connection. taskrow never ends that client. Resolves once the server's version is known;
 * rejects with `UNSUPPORTED_SERVER` on servers without SKIP LOCKED, and with `INVALID_CLIENT` when
 * `client` is not an open mariadb client.
 *
 * `tr.in(conn)` binds taskrow to the connection of the application's open transaction
 * (`await conn.beginTransaction()`): writes made through it commit or roll back with it.
 *
 * The client MUST keep the driver's default `foundRows: true` (UPDATE counts matched rows).
 */
export async function taskrow(client: MariadbClient, options?: TaskrowOptions): Promise<Taskrow<MariadbConnection>> {
  const target = checkClient(client);
  return createTaskrow<MariadbConnection>({
    client: mariadbClient(target),
    joinTransaction: (tx) => mariadbClient(checkTransaction(tx), true),
    options,
    closedClient: `a mariadb ${isMariadbPool(target) ? 'pool that has been ended' : 'connection that is closed'}`,
  });
}
