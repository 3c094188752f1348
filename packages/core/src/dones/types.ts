/** One key and when it was marked (by the database clock). */
export interface DoneEntry {
  readonly key: string;
  readonly markedAt: Date;
}

/** A page of `list()`. */
export interface DonePage {
  readonly entries: DoneEntry[];
  /** Pass as `after` for the next page; undefined on the last page. */
  readonly next: string | undefined;
}

/** What `clear()` does with the old keys once the namespace is empty. */
export type PurgeMode = 'background' | 'wait' | 'none';

/**
 * The done-keys of one namespace. Keys are exact strings (see `encodeKey`): `"a"`, `"A"`, `"a "`
 * and `"a\t"` are four keys. Every method accepts one key or many; every batch is validated whole
 * before any statement runs, so bad input changes nothing.
 */
export interface Dones {
  readonly namespace: string;
  /**
   * Marks keys done. Idempotent. Resolves to the number of keys that were not done before.
   * Batches are split under the server's packet and placeholder limits; each part commits on its
   * own, so a failed call is safe to repeat. Each part is one statement that share-locks the
   * namespace's row: a `clear()` racing it MUST NOT strand the part in the retired generation (the
   * clear waits for it, or it waits for the clear and lands in the new generation).
   */
  mark(keys: string | Iterable<string>): Promise<number>;
  /** Unmarks keys. Idempotent. Resolves to the number of keys that were done. */
  unmark(keys: string | Iterable<string>): Promise<number>;
  /** True when `key` is done. */
  isDone(key: string): Promise<boolean>;
  /** The keys among `keys` that are done, in input order (duplicates kept). */
  areDone(keys: Iterable<string>): Promise<string[]>;
  /** True when every key is done (true for none). */
  allDone(keys: Iterable<string>): Promise<boolean>;
  /** True when at least one key is done (false for none). */
  anyDone(keys: Iterable<string>): Promise<boolean>;
  /**
   * Streams the candidates that are not done, in input order, in bounded memory: candidates are
   * checked in chunks with one set-based query each, never one query per key.
   */
  pending(candidates: Iterable<string> | AsyncIterable<string>, options?: { chunkSize?: number }): AsyncGenerator<string>;
  /** The number of done keys. */
  count(): Promise<number>;
  /** When `key` was marked, or null when it is not done. */
  markedAt(key: string): Promise<Date | null>;
  /** A page of done keys in byte order of their UTF-8 form (keys over 2,999 bytes by prefix); `after` is the previous page's `next`. */
  list(options?: { limit?: number; after?: string }): Promise<DonePage>;
  /**
   * Unmarks every key of the namespace at once: the namespace moves to a new, empty generation in
   * one short transaction, whatever its size, without touching other namespaces; the old rows are
   * purged afterwards (`purge`: in the background by default, `wait` to finish first, `none` to
   * leave them for `taskrow.purgeCleared()`).
   */
  clear(options?: { purge?: PurgeMode }): Promise<void>;
}
