import { slot } from '../../instance.js';
import type { Executor } from '../../engine/executor.js';
import { perQueue } from '../model/registry.js';
import type { QueueTables } from '../model/tables.js';

/** One purge window: rows deleted, and where the next window starts (undefined: the last one). */
export interface PurgeWindow<K> {
  readonly deleted: number;
  readonly next: K | undefined;
}

/** Runs `window` from `start` until it reports the last window. Resolves to the rows deleted. */
export async function purgeAllWindows<K>(start: K, window: (after: K) => Promise<PurgeWindow<K>>): Promise<number> {
  let total = 0;
  for (let after: K | undefined = start; after !== undefined; ) {
    const { deleted, next } = await window(after);
    total += deleted;
    after = next;
  }
  return total;
}

/** Where a process's throttled purge of one queue stands. */
type Place<K> = { at: number; after: K };

/**
 * A purge (`name`) that runs one window of a queue at most once per `everyMs` per taskrow instance
 * and queue, however many workers ask (0 at once otherwise), each window going on where the last one
 * of the process ended, round the table.
 */
export function throttledPurge<K>(
  name: string,
  everyMs: number,
  start: K,
  window: (exec: Executor, t: QueueTables, queue: string, after: K) => Promise<PurgeWindow<K>>,
) {
  const places = slot(`purge places ${name}`, () => new Map<string, Place<K>>());
  return async (exec: Executor, t: QueueTables, queue: string): Promise<number> => {
    const p = perQueue(exec.state, places, t, queue, () => ({ at: -Infinity, after: start }));
    const now = performance.now();
    if (now - p.at < everyMs) return 0;
    p.at = now;
    const { deleted, next } = await window(exec, t, queue, p.after);
    p.after = next ?? start;
    return deleted;
  };
}
