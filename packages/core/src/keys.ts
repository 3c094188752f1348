import { hash } from 'node:crypto';
import { InvalidArgumentError } from './errors.js';
import { show } from './validate.js';

/** The longest key, in UTF-8 bytes: 1,024 emoji or 4,096 ASCII characters. */
export const MAX_KEY_BYTES = 4096;

/**
 * Keys up to this many UTF-8 bytes are indexed as they are (so the index keeps their order and
 * locality); longer keys are indexed by a prefix plus their SHA-256 (see `indexForm`).
 */
export const VERBATIM_KEY_BYTES = 2999;
/** Width of the index column: one more than any verbatim key, so the two forms never collide. */
export const INDEX_KEY_BYTES = VERBATIM_KEY_BYTES + 1;
const LONG_PREFIX_BYTES = INDEX_KEY_BYTES - 32;

/** The 16-byte digest of a key's bytes (first half of SHA-256). */
export function keyDigest(bytes: Buffer): Buffer {
  return (hash('sha256', bytes, 'buffer') as Buffer).subarray(0, 16);
}

/**
 * The form a key takes in a unique index that must stay within InnoDB's 3,072-byte limit: the
 * bytes themselves up to `VERBATIM_KEY_BYTES`, otherwise exactly `INDEX_KEY_BYTES` bytes (a prefix
 * and the full SHA-256). Distinct keys always get distinct forms: verbatim forms are shorter than
 * long ones, and long keys differ in prefix or digest.
 */
export function indexForm(bytes: Buffer): Buffer {
  if (bytes.length <= VERBATIM_KEY_BYTES) return bytes;
  return Buffer.concat([bytes.subarray(0, LONG_PREFIX_BYTES), hash('sha256', bytes, 'buffer') as Buffer]);
}

/** A validated key: its exact UTF-8 bytes and its index form. */
export interface EncodedKey {
  readonly key: string;
  readonly bytes: Buffer;
  /** `indexForm(bytes)`. */
  readonly k: Buffer;
  /** True when the key is longer than `VERBATIM_KEY_BYTES` and its bytes must be stored beside the index form. */
  readonly long: boolean;
}

/**
 * Validates and encodes one key. Keys are exact strings: case, trailing spaces and tabs matter,
 * nothing is trimmed or normalised. MUST reject non-strings, the empty string, strings that are not
 * well-formed Unicode (lone surrogates cannot round-trip) and keys over `MAX_KEY_BYTES`.
 */
export function encodeKey(key: unknown, what = 'key', index?: number): EncodedKey {
  // The name is made only for an error: `what`, or `what #index` for a key of a batch.
  const name = (): string => (index === undefined ? what : `${what} #${index}`);
  if (typeof key !== 'string') throw new InvalidArgumentError('INVALID_KEY', `${name()} must be a string, got ${show(key)}`);
  if (key.length === 0) throw new InvalidArgumentError('INVALID_KEY', `${name()} must not be empty`);
  if (!(key as string & { isWellFormed(): boolean }).isWellFormed()) {
    throw new InvalidArgumentError('INVALID_KEY', `${name()} ${show(key)} contains a lone surrogate and cannot be stored exactly`);
  }
  const bytes = Buffer.from(key, 'utf8');
  if (bytes.length > MAX_KEY_BYTES) {
    throw new InvalidArgumentError('INVALID_KEY', `${name()} ${show(key)} is ${bytes.length} bytes in UTF-8; the limit is ${MAX_KEY_BYTES}`);
  }
  const long = bytes.length > VERBATIM_KEY_BYTES;
  return { key, bytes, k: long ? indexForm(bytes) : bytes, long };
}

/** Accepts one key or an iterable of keys (not a bare string's characters) and validates them all before anything runs. */
export function encodeKeys(keys: unknown, what = 'key'): EncodedKey[] {
  if (typeof keys === 'string') return [encodeKey(keys, what)];
  if (keys === null || typeof keys !== 'object' || !(Symbol.iterator in keys)) {
    throw new InvalidArgumentError('INVALID_KEY', `expected a ${what} or an iterable of them, got ${show(keys)}`);
  }
  const out: EncodedKey[] = [];
  let i = 0;
  for (const k of keys as Iterable<unknown>) out.push(encodeKey(k, what, i++));
  return out;
}
