/**
 * In-process wake-ups: an enqueue that committed rings idle workers of that queue in this process,
 * so they claim at once instead of at their next poll. Keyed by jobs table and queue name; two
 * databases with the same prefix and queue name share a key, which costs a spare claim, never a
 * missed job (workers still poll).
 */
interface Bell {
  readonly ring: () => void;
  /** Jobs this worker's next claim would take now (0 while all its handler slots are taken). */
  readonly room: () => number;
  /** The worker naps between polls: no claim of its is in flight. */
  readonly napping: () => boolean;
}

const bells = new Map<string, Set<Bell>>();

const keyOf = (jobsTable: string, queue: string): string => `${jobsTable}\u0000${queue}`;

/** Where the next partial ring starts. */
let turn = 0;

/**
 * Calls `ring` after committed enqueues into `queue` of `jobsTable` in this process (see
 * `enqueued`); `room` tells how many jobs the ringing worker's next claim would take now,
 * `napping` whether it waits between polls. Returns the unsubscribe.
 */
export function onEnqueue(jobsTable: string, queue: string, ring: () => void, room: () => number, napping: () => boolean): () => void {
  const key = keyOf(jobsTable, queue);
  const set = bells.get(key) ?? new Set();
  bells.set(key, set);
  const bell = { ring, room, napping };
  set.add(bell);
  return () => {
    set.delete(bell);
    if (set.size === 0) bells.delete(key);
  };
}

/**
 * Rings workers of `queue` of `jobsTable` in this process: `jobs` jobs of it became ready. Workers
 * are taken in turn, napping ones first (one in the middle of a claim may be taking these very
 * jobs already), until the claims of those with room together take `jobs` (a busy worker rung on
 * the way claims when a slot frees), so a few new jobs wake one worker that claims them all, not
 * every worker of the queue (the others' claims would find nothing; they still poll). Returns how
 * many of the jobs the rung workers' claims cover.
 */
export function enqueued(jobsTable: string, queue: string, jobs: number): number {
  const all = [...(bells.get(keyOf(jobsTable, queue)) ?? [])];
  const from = all.length > 0 ? turn++ % all.length : 0;
  const inTurn = all.map((_, i) => all[(from + i) % all.length]!);
  let covered = 0;
  for (const b of [...inTurn.filter((w) => w.napping()), ...inTurn.filter((w) => !w.napping())]) {
    if (covered >= jobs) break;
    covered += b.room();
    b.ring();
  }
  return Math.min(covered, jobs);
}
