import { hash } from 'node:crypto';
import { InvalidArgumentError } from './errors.js';
import { show } from './validate.js';

/** The longest key, in UTF-8 bytes: 1,024 emoji or 4,096 ASCII characters. */
export const MAX_KEY_BYTES = 4096;

/** A validated key: its exact UTF-8 bytes and their 16-byte digest (the index key). */
export interface EncodedKey {
  readonly key: string;
  readonly bytes: Buffer;
  readonly h: Buffer;
}

/** The 16-byte index digest of a key's bytes (first half of SHA-256). */
export function keyDigest(bytes: Buffer): Buffer {
  return (hash('sha256', bytes, 'buffer') as Buffer).subarray(0, 16);
}

/**
 * Validates and encodes one key. Keys are exact strings: case, trailing spaces and tabs matter,
 * nothing is trimmed or normalised. MUST reject non-strings, the empty string, strings that are not
 * well-formed Unicode (lone surrogates cannot round-trip) and keys over `MAX_KEY_BYTES`.
 */
export function encodeKey(key: unknown, what = 'key'): EncodedKey {
  if (typeof key !== 'string') throw new InvalidArgumentError('INVALID_KEY', `${what} must be a string, got ${show(key)}`);
  if (key.length === 0) throw new InvalidArgumentError('INVALID_KEY', `${what} must not be empty`);
  if (!(key as string & { isWellFormed(): boolean }).isWellFormed()) {
    throw new InvalidArgumentError('INVALID_KEY', `${what} ${show(key)} contains a lone surrogate and cannot be stored exactly`);
  }
  const bytes = Buffer.from(key, 'utf8');
  if (bytes.length > MAX_KEY_BYTES) {
    throw new InvalidArgumentError('INVALID_KEY', `${what} ${show(key)} is ${bytes.length} bytes in UTF-8; the limit is ${MAX_KEY_BYTES}`);
  }
  return { key, bytes, h: keyDigest(bytes) };
}

/** Accepts one key or an iterable of keys (not a bare string's characters) and validates them all before anything runs. */
export function encodeKeys(keys: unknown, what = 'key'): EncodedKey[] {
  if (typeof keys === 'string') return [encodeKey(keys, what)];
  if (keys === null || typeof keys !== 'object' || !(Symbol.iterator in keys)) {
    throw new InvalidArgumentError('INVALID_KEY', `expected a ${what} or an iterable of them, got ${show(keys)}`);
  }
  const out: EncodedKey[] = [];
  let i = 0;
  for (const k of keys as Iterable<unknown>) out.push(encodeKey(k, `${what} #${i++}`));
  return out;
}
