import type { Executor } from '../engine/executor.js';
import type { DonesTables } from './tables.js';
import { chunks, statementBytes } from '../chunk.js';
import { binaryList, binaryListedBytes } from '../sql.js';
import { toNumber } from '../validate.js';

/** Rows read per purge step. */
const PURGE_ROWS = 5000;
/**
 * Keys per purge DELETE: short transactions, record locks only. MySQL plans an `IN (...)` of
 * 3,000 or more keys of this primary key (up to 3,010 bytes each) without a range once the plan
 * would pass `range_optimizer_max_mem_size` (8 MiB by default): the DELETE then scans the table.
 */
const DELETE_ROWS = 1000;

/** Work started in the background and awaited by `taskrow.close()`. */
export interface BackgroundWork {
  start(job: () => Promise<unknown>): void;
  /** Resolves when everything started so far has finished; rejects with the first failure. */
  settle(): Promise<void>;
}

/** A tracker for background work; failures are kept for `settle()`, never left unhandled. */
export function backgroundWork(): BackgroundWork {
  const running = new Set<Promise<unknown>>();
  let failure: unknown;
  return {
    start(job) {
      const p = job().catch((err: unknown) => {
        failure ??= err;
      });
      running.add(p);
      void p.finally(() => running.delete(p));
    },
    async settle() {
      while (running.size > 0) await Promise.all(running);
      if (failure !== undefined) {
        const err = failure;
        failure = undefined;
        throw err;
      }
    },
  };
}

/**
 * Deletes the rows of one retired generation in short transactions of point deletes by primary
 * key (no range locks, so writers of other namespaces never wait), then forgets the generation.
 * Each read starts after the last key of the one before: InnoDB keeps deleted rows in the index
 * until its purge thread removes them, and a read from the generation's start would walk every one
 * of them again (quadratic in the generation's size when the server's purge lags). A row a
 * straggling mark adds behind that position is deleted by the mark itself (see `markChecked`).
 * Resumable: safe to run twice or after a crash. Resolves to the number of rows deleted.
 */
export async function purgeGeneration(exec: Executor, t: DonesTables, gen: number): Promise<number> {
  let deleted = 0;
  for (let after: Buffer | undefined; ; ) {
    const { rows } = await exec.query<{ k: Buffer }>(
      `SELECT \`k\` FROM ${t.dones} WHERE \`gen\` = ?${after ? ' AND `k` > ?' : ''} ORDER BY \`k\` LIMIT ${PURGE_ROWS}`,
      after ? [gen, after] : [gen],
    );
    if (rows.length === 0) break;
    for (const part of chunks(
      rows.map((r) => r.k),
      { maxRows: DELETE_ROWS, maxBytes: statementBytes(exec.dialect.maxAllowedPacket) },
      binaryListedBytes,
    )) {
      deleted += (await exec.query(`DELETE FROM ${t.dones} WHERE \`gen\` = ? AND \`k\` IN (${binaryList(part)})`, [gen])).affectedRows;
    }
    after = rows[rows.length - 1]!.k;
  }
  await exec.query(`DELETE FROM ${t.gen} WHERE \`gen\` = ? AND \`retired_at\` IS NOT NULL`, [gen]);
  return deleted;
}

/** Purges every retired generation (left by `clear({ purge: 'none' })` or a process that stopped mid-purge). */
export async function purgeRetired(exec: Executor, t: DonesTables): Promise<number> {
  const { rows } = await exec.query<{ gen: unknown }>(`SELECT \`gen\` FROM ${t.gen} WHERE \`retired_at\` IS NOT NULL ORDER BY \`gen\``);
  let deleted = 0;
  for (const r of rows) deleted += await purgeGeneration(exec, t, toNumber(r.gen));
  return deleted;
}
