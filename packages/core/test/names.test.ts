import { describe, expect, it } from 'vitest';
import { TaskrowError } from '../src/errors.js';
import { ident, validateName, validatePrefix, validateTableName } from '../src/names.js';

const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    return e instanceof TaskrowError ? e.code : 'not a TaskrowError';
  }
  return undefined;
};

describe('names', () => {
  it('accepts documented namespace names and returns them unchanged', () => {
    for (const ok of ['a', 'run1', 'Run-2024-01-01', 'cluster.run:7', 'x'.repeat(64)]) expect(validateName('namespace', ok)).toBe(ok);
  });

  it('rejects empty, long, non-ASCII, SQL fragments and non-strings with INVALID_NAME naming the value', () => {
    for (const bad of ['', 'x'.repeat(65), 'a b', "a'--", 'é', '_lead', '.lead', 'a;DROP', 'a`b', 3, null, undefined]) {
      expect(
        code(() => validateName('namespace', bad)),
        String(bad),
      ).toBe('INVALID_NAME');
    }
    expect(() => validateName('namespace', 'a b')).toThrow(/"a b"/);
    expect(() => validateName('namespace', 'x'.repeat(65))).toThrow(/1 to 64 characters/);
  });

  it('limits table-name parts to lowercase letters, digits and _ (32 at most)', () => {
    expect(validateTableName('loop', 'crawl_pages_1')).toBe('crawl_pages_1');
    for (const bad of ['Crawl', 'a-b', 'a.b', 'x'.repeat(33), ''])
      expect(
        code(() => validateTableName('loop', bad)),
        bad,
      ).toBe('INVALID_NAME');
  });

  it('checks prefixes and refuses to quote anything but plain identifiers', () => {
    expect(validatePrefix('')).toBe('');
    expect(validatePrefix('app_tr_')).toBe('app_tr_');
    expect(code(() => validatePrefix('a-b'))).toBe('INVALID_NAME');
    expect(code(() => validatePrefix('x'.repeat(25)))).toBe('INVALID_NAME');
    expect(ident('taskrow_dones')).toBe('`taskrow_dones`');
    expect(code(() => ident('a`; DROP TABLE x'))).toBe('INVALID_NAME');
  });
});
