import type { ResKey } from './names.js';
import type { KeyReason } from './types.js';

/** A lock row as read inside the locking transaction (or by `canRun()`). */
export interface LockRow {
  /** Key digest as a binary string (`ResKey.id`). */
  readonly id: string;
  /** Holder id as a binary string. */
  readonly holder: string;
  readonly mode: 'reader' | 'writer';
  /** False once the lease has passed by the database clock: the lock counts as free. */
  readonly live: boolean;
}

/** What the rules need to know about a job's keys at one moment. */
export interface KeyState {
  /** Digests of keys that exist (produced, not expired). */
  readonly present: ReadonlySet<string>;
  readonly locks: readonly LockRow[];
}

/**
 * jobs.py's rules, one reason per key at most, in this order. An input must exist and have no
 * writer (else `input_missing`). An output must not exist unless `overwrite` (`output_exists`),
 * must have no other writer (`output_locked`) and no readers (`output_used`). Locks of `me` (a
 * retried acquisition) and locks whose lease passed are ignored.
 */
export function blockedKeys(inputs: readonly ResKey[], outputs: readonly ResKey[], state: KeyState, me: string | undefined, overwrite: boolean): KeyReason[] {
  const writers = new Set<string>();
  const readers = new Set<string>();
  for (const l of state.locks) {
    if (!l.live || l.holder === me) continue;
    (l.mode === 'writer' ? writers : readers).add(l.id);
  }
  const out: KeyReason[] = [];
  for (const k of inputs) {
    if (!state.present.has(k.id) || writers.has(k.id)) out.push({ key: k.key, reason: 'input_missing' });
  }
  for (const k of outputs) {
    if (!overwrite && state.present.has(k.id)) out.push({ key: k.key, reason: 'output_exists' });
    else if (writers.has(k.id)) out.push({ key: k.key, reason: 'output_locked' });
    else if (readers.has(k.id)) out.push({ key: k.key, reason: 'output_used' });
  }
  return out;
}

/** Replaces every run of digits and dashes with `*`, as jobs.py does before recording history. */
export function sanitize(name: string): string {
  return name.replace(/[0-9][0-9-]*/g, '*');
}
