/**
 * In-process wake-ups: an enqueue that committed rings every idle worker of that queue in this
 * process, so it claims at once instead of at its next poll. Keyed by jobs table and queue name;
 * two databases with the same prefix and queue name share a key, which costs a spare claim, never
 * a missed job (workers still poll).
 */
const bells = new Map<string, Set<() => void>>();

const keyOf = (jobsTable: string, queue: string): string => `${jobsTable}\u0000${queue}`;

/** Calls `ring` after every committed enqueue into `queue` of `jobsTable` in this process; returns the unsubscribe. */
export function onEnqueue(jobsTable: string, queue: string, ring: () => void): () => void {
  const key = keyOf(jobsTable, queue);
  const set = bells.get(key) ?? new Set();
  bells.set(key, set);
  set.add(ring);
  return () => {
    set.delete(ring);
    if (set.size === 0) bells.delete(key);
  };
}

/** Rings every worker of `queue` of `jobsTable` in this process (an enqueue into it committed). */
export function enqueued(jobsTable: string, queue: string): void {
  for (const ring of bells.get(keyOf(jobsTable, queue)) ?? []) ring();
}
