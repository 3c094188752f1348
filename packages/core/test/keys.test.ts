import { describe, expect, it } from 'vitest';
import { TaskrowError } from '../src/errors.js';
import { encodeKey, encodeKeys, indexForm, INDEX_KEY_BYTES, MAX_KEY_BYTES, VERBATIM_KEY_BYTES } from '../src/keys.js';

describe('keys', () => {
  it('keeps keys exact: no trimming, case folding or normalisation', () => {
    const forms = ['a', 'A', 'a ', 'a\t', 'e\u0301', '\u00e9'].map((k) => encodeKey(k).k.toString('hex'));
    expect(new Set(forms).size).toBe(6);
    expect(encodeKey('😀').bytes.toString('hex')).toBe('f09f9880');
  });

  it('indexes short keys verbatim and long keys as prefix + SHA-256 of exactly INDEX_KEY_BYTES', () => {
    const short = Buffer.from('k'.repeat(VERBATIM_KEY_BYTES));
    expect(indexForm(short)).toBe(short);
    const a = Buffer.from(`${'k'.repeat(3500)}a`);
    const b = Buffer.from(`${'k'.repeat(3500)}b`);
    expect(indexForm(a).length).toBe(INDEX_KEY_BYTES);
    expect(indexForm(a).equals(indexForm(b))).toBe(false);
    expect(indexForm(Buffer.from('k'.repeat(VERBATIM_KEY_BYTES + 1))).length).toBe(INDEX_KEY_BYTES);
    expect(INDEX_KEY_BYTES + 8).toBeLessThanOrEqual(3072); // InnoDB's index key limit with the BIGINT before it
  });

  it('rejects bad keys with INVALID_KEY naming the limit or the problem', () => {
    const err = (k: unknown): TaskrowError => {
      try {
        encodeKey(k);
      } catch (e) {
        return e as TaskrowError;
      }
      throw new Error('no error');
    };
    expect(err('x'.repeat(MAX_KEY_BYTES + 1)).message).toContain(`limit is ${MAX_KEY_BYTES}`);
    expect(err('😀'.repeat(MAX_KEY_BYTES / 4 + 1)).code).toBe('INVALID_KEY');
    expect(err('').code).toBe('INVALID_KEY');
    expect(err('\udc00x').message).toMatch(/lone surrogate/);
    expect(err(5).message).toMatch(/must be a string, got 5/);
  });

  it('takes one key or an iterable, validating every key first', () => {
    expect(encodeKeys('ab').map((k) => k.key)).toEqual(['ab']);
    expect(encodeKeys(new Set(['a', 'b'])).map((k) => k.key)).toEqual(['a', 'b']);
    expect(() => encodeKeys(['ok', ''])).toThrow(/key #1 must not be empty/);
    expect(() => encodeKeys(42)).toThrow(TaskrowError);
  });
});
