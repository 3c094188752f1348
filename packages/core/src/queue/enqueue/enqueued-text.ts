import type { Enqueued } from '../model/types.js';

/**
 * A receipt's text for an enqueue's result: ids in order, `~` before a deduplicated one, and a run
 * of three or more new ids one apart as `first-last` (a batch of 1,000 consecutive ids is one
 * short text instead of 8 KB, which InnoDB would store off the receipt's page).
 */
export function encodeEnqueued(out: readonly Enqueued[]): string {
  const parts: string[] = [];
  for (let i = 0; i < out.length; ) {
    const e = out[i]!;
    let j = i;
    while (!e.deduplicated && j + 1 < out.length && !out[j + 1]!.deduplicated && out[j + 1]!.id === out[j]!.id + 1) j++;
    if (j - i >= 2) parts.push(`${e.id}-${out[j]!.id}`);
    else for (let k = i; k <= j; k++) parts.push(out[k]!.deduplicated ? `~${out[k]!.id}` : String(out[k]!.id));
    i = j + 1;
  }
  return parts.join(',');
}

/** The result an enqueue's receipt text (`encodeEnqueued`; also what `enqueue_jobs` returns, ids only) stands for. */
export function decodeEnqueued(text: string): Enqueued[] {
  const out: Enqueued[] = [];
  for (const s of text.split(',')) {
    const dash = s.indexOf('-');
    if (s.startsWith('~')) out.push({ id: Number(s.slice(1)), deduplicated: true });
    else if (dash < 0) out.push({ id: Number(s), deduplicated: false });
    else for (let id = Number(s.slice(0, dash)), last = Number(s.slice(dash + 1)); id <= last; id++) out.push({ id, deduplicated: false });
  }
  return out;
}
