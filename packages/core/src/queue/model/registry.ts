import type { InstanceState, Slot } from '../../instance.js';
import type { QueueTables } from './tables.js';

/**
 * `make()`'s value for the table prefix and queue in `registry` of the taskrow instance `state`,
 * made once per instance: the in-memory state of one queue of one database (a doorbell sleeper,
 * what rings found, whether a claim made sure of the queue's row).
 */
export function perQueue<T>(state: InstanceState, registry: Slot<Map<string, T>>, t: QueueTables, queue: string, make: () => T): T {
  const byQueue = state.get(registry);
  const key = `${t.sleepers}\u0000${queue}`;
  let value = byQueue.get(key);
  if (value === undefined) byQueue.set(key, (value = make()));
  return value;
}
