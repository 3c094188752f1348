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
 * One snapshot shared by every gauge of a scrape: prom-client collects all gauges at once, and each
 * would otherwise read the database again. The read in flight is shared; the next scrape reads anew.
 */
export function sharedSnapshot(tr: Taskrow, countLimit: number): () => Promise<Snapshot> {
  let inFlight: Promise<Snapshot> | undefined;
  return () => {
    if (!inFlight) {
      const promise = readSnapshot(tr, countLimit);
      inFlight = promise;
      const clear = (): void => {
        if (inFlight === promise) inFlight = undefined;
      };
      promise.then(clear, clear);
    }
    return inFlight;
  };
}
