import type { Enqueued } from './types.js';

/** A receipt's text for an enqueue's result: ids in order, `~` before a deduplicated one. */
export function encodeEnqueued(out: readonly Enqueued[]): string {
  return out.map((e) => (e.deduplicated ? `~${e.id}` : String(e.id))).join(',');
}

/** The result an enqueue's receipt text (`encodeEnqueued`; also what `enqueue_jobs` returns) stands for. */
export function decodeEnqueued(text: string): Enqueued[] {
  return text.split(',').map((s) => (s.startsWith('~') ? { id: Number(s.slice(1)), deduplicated: true } : { id: Number(s), deduplicated: false }));
}
