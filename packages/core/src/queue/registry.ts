import type { SqlClient } from '../port.js';
import type { QueueTables } from './tables.js';

/**
 * `make()`'s value for `client`, table prefix and queue, made once per process: the per-process
 * state of one queue of one database (a doorbell sleeper, what rings found, whether a claim made
 * sure of the queue's row).
 */
export function perQueue<T>(registry: WeakMap<SqlClient, Map<string, T>>, client: SqlClient, t: QueueTables, queue: string, make: () => T): T {
  const byQueue = registry.get(client) ?? new Map<string, T>();
  registry.set(client, byQueue);
  const key = `${t.sleepers}\u0000${queue}`;
  let value = byQueue.get(key);
  if (value === undefined) byQueue.set(key, (value = make()));
  return value;
}
