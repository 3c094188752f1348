import type { Executor } from '../../engine/executor.js';
import { toNumber } from '../../validate.js';
import type { QueueTables } from '../model/tables.js';
import { purgeAllWindows, throttledPurge, type PurgeWindow } from './windows.js';
import { QUEUE_DEFAULT_ROW } from './limits.js';
import { noJobOfKey } from './key-slots.js';

/** Key rows one purge transaction looks at, at most (one range of the primary key). */
const KEY_WINDOW = 5000;

/** How often (ms) a process's workers purge a window of a queue's key rows, at most. */
const KEY_PURGE_EVERY_MS = 60_000;

/**
 * In one READ COMMITTED transaction, deletes the `<prefix>queue_keys` rows of `queue` among the
 * next `KEY_WINDOW` keys after `after` (in key order; the queue default's row, the empty key, is
 * never among them) whose key has no job holding or waiting for a slot (ready, running or
 * blocked, see `key-slots.ts`) and no limit of its own. Resolves to the number deleted and the
 * key to go on after, undefined when the window reached the last key. A key's row holds its
 * limit override and is what admissions of the key lock; a row without an override is made again
 * by the next admission of its key, and the delete waits for an admission that holds it, so a
 * purge never changes a limit in force and never lets two admissions of one key overlap.
 */
async function purgeWindow(exec: Executor, t: QueueTables, queue: string, after: string): Promise<PurgeWindow<string>> {
  return exec.transaction(
    async (conn) => {
      const { rows } = await conn.query<{ n: unknown; last: string | null }>(
        `SELECT COUNT(*) AS n, MAX(w.\`conc_key\`) AS last FROM (
         SELECT \`conc_key\` FROM ${t.keys} WHERE \`queue\` = ? AND \`conc_key\` > ? ORDER BY \`conc_key\` LIMIT ${KEY_WINDOW}) AS w`,
        [queue, after],
      );
      const last = rows[0]?.last;
      if (last === null || last === undefined) return { deleted: 0, next: undefined };
      const { affectedRows } = await conn.query(
        `DELETE FROM ${t.keys} WHERE \`queue\` = ? AND \`conc_key\` > ? AND \`conc_key\` <= ? AND \`max_running\` IS NULL
         AND ${noJobOfKey(t, t.keys)}`,
        [queue, after, last],
      );
      return { deleted: affectedRows, next: toNumber(rows[0]!.n) < KEY_WINDOW ? undefined : last };
    },
    { isolation: 'READ COMMITTED' },
  );
}

/**
 * Deletes every key row of `queue` that `purgeWindow` would, window after window (each its own
 * transaction); see `Queue.purgeKeys`. Resolves to the number deleted.
 */
export function purgeIdleKeys(exec: Executor, t: QueueTables, queue: string): Promise<number> {
  return purgeAllWindows(QUEUE_DEFAULT_ROW, (after) => purgeWindow(exec, t, queue, after));
}

/**
 * One `purgeWindow` of a queue, at most once per `KEY_PURGE_EVERY_MS` per client and queue in this
 * process (see `throttledPurge`): a process looks at `KEY_WINDOW` key rows a minute, whatever the
 * number of keys.
 */
export const purgeIdleKeysNow = throttledPurge('idle keys', KEY_PURGE_EVERY_MS, QUEUE_DEFAULT_ROW, purgeWindow);
