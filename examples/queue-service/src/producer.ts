import type { Queue } from '@taskrow/core';
import type { Payload } from './jobs.js';

/** What the producer enqueued. */
export interface Produced {
  /** Distinct jobs added. */
  added: number;
  /** Enqueues that found a live job with the same dedup key and added nothing. */
  deduplicated: number;
}

/**
 * Enqueues `count` thumbnail jobs in batches (each batch one transaction: all of it or none), with
 * urgent mail half-way (priority -10: runs before the older thumbnails), two delayed reminders, one
 * daily report (due in 1 s) enqueued three times under one dedup key, a flaky job and a poison job (3 attempts).
 * Stops between batches once `stopping()` is true.
 */
export async function produce(queue: Queue<Payload>, count: number, stopping: () => boolean): Promise<Produced> {
  const out: Produced = { added: 0, deduplicated: 0 };
  const note = (results: readonly { deduplicated: boolean }[]): void => {
    for (const r of results) r.deduplicated ? (out.deduplicated += 1) : (out.added += 1);
  };
  const batch = 50;
  for (let i = 0; i < count && !stopping(); i += batch) {
    const items = [];
    for (let image = i; image < Math.min(count, i + batch); image++) items.push({ payload: { kind: 'thumbnail', image } as const });
    note(await queue.enqueueMany(items));
    if (i + batch >= count / 2 && i < count / 2) {
      const behind = Math.min(count, i + batch);
      note(
        await queue.enqueueMany(
          ['ops@example.org', 'oncall@example.org'].map((to) => ({ payload: { kind: 'email', to, queuedBehind: behind } as const, priority: -10 })),
        ),
      );
    }
    await new Promise((resolve) => setImmediate(resolve)); // let the worker run meanwhile
  }
  if (stopping()) return out;
  note(await queue.enqueueMany([1, 2].map((n) => ({ payload: { kind: 'reminder', note: `reminder ${n}` } as const, delay: 1000 }))));
  const day = new Date().toISOString().slice(0, 10);
  for (let n = 0; n < 3; n++) note([await queue.enqueue({ kind: 'report', day }, { dedupKey: `report:${day}`, delay: 1000 })]);
  note([await queue.enqueue({ kind: 'flaky', failures: 2 })]);
  note([await queue.enqueue({ kind: 'poison' }, { maxAttempts: 3 })]);
  return out;
}
