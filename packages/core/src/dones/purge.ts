import type { Executor } from '../engine/executor.js';
import type { DonesTables } from './tables.js';
import { placeholderList } from '../chunk.js';
import { toNumber } from '../validate.js';

/** Rows deleted per purge transaction: short transactions, record locks only. */
const PURGE_ROWS = 5000;

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
 * Resumable: safe to run twice or after a crash. Resolves to the number of rows deleted.
 */
export async function purgeGeneration(exec: Executor, t: DonesTables, gen: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rows } = await exec.query<{ k: Buffer }>(`SELECT \`k\` FROM ${t.dones} WHERE \`gen\` = ? LIMIT ${PURGE_ROWS}`, [gen]);
    if (rows.length === 0) break;
    const res = await exec.query(`DELETE FROM ${t.dones} WHERE \`gen\` = ? AND \`k\` IN (${placeholderList(rows.length)})`, [
      gen,
      ...rows.map((r) => r.k),
    ]);
    deleted += res.affectedRows;
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
