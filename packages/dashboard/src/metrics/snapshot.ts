import type { DonesSummary, LoopStats, QueueSummary, Taskrow } from '@taskrow/core';

/** What one scrape reads from the database. */
export interface Snapshot {
  readonly queues: QueueSummary[];
  readonly loops: { readonly name: string; readonly stats: LoopStats }[];
  readonly dones: DonesSummary[];
  readonly runningResourceJobs: number;
}

/** At most this many queues, loops and namespaces are read per scrape (10 pages of 200). */
export const MAX_PAGES = 10;

async function all<T>(read: (after: string | undefined) => Promise<{ items: T[]; next: string | undefined }>): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await read(after);
    out.push(...page.items);
    if (page.next === undefined) break;
    after = page.next;
  }
  return out;
}

/** Reads every queue, loop, Dones namespace (counts capped at `countLimit`) and the running Resources jobs. */
export async function readSnapshot(tr: Taskrow, countLimit: number): Promise<Snapshot> {
  const inspect = tr.inspect();
  const queues = await all((after) => inspect.queues({ after, limit: 200, countLimit }));
  const loopNames = await all((after) => inspect.loops({ after, limit: 200 }));
  const loops = [];
  for (const l of loopNames) loops.push({ name: l.name, stats: await tr.loop(l.name).stats() });
  const dones = await all((after) => inspect.donesNamespaces({ after, limit: 200, countLimit }));
  const running = await tr.resources({ releaseOnExit: false }).running();
  return { queues, loops, dones, runningResourceJobs: running.length };
}

/**
 * One snapshot shared by every gauge of a scrape: prom-client collects gauges in parallel, and
 * each would otherwise read the database again. A snapshot is reused for `reuseMs` after it is read.
 */
export function sharedSnapshot(tr: Taskrow, countLimit: number, reuseMs = 1000): () => Promise<Snapshot> {
  let current: { at: number; promise: Promise<Snapshot> } | undefined;
  return () => {
    const now = Date.now();
    if (!current || now - current.at > reuseMs) {
      const promise = readSnapshot(tr, countLimit);
      current = { at: now, promise };
      promise.catch(() => {
        if (current?.promise === promise) current = undefined;
      });
    }
    return current.promise;
  };
}
