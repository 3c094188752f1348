import { describe, expect, it } from 'vitest';
import { chunks, placeholderList, placeholderRows, slices, statementBytes } from '../src/chunk.js';

describe('chunks', () => {
  it('splits by rows and by bytes, keeps order, and gives an oversized item its own chunk', () => {
    const items = [5, 5, 5, 20, 5, 5];
    const out = [...chunks(items, { maxRows: 2, maxBytes: 12 }, (n) => n)];
    expect(out).toEqual([[5, 5], [5], [20], [5, 5]]);
    expect(out.flat()).toEqual(items);
    expect([...chunks([], { maxRows: 2, maxBytes: 10 }, () => 1)]).toEqual([]);
  });

  it('keeps statements well under the packet size', () => {
    expect(statementBytes(16 * 2 ** 20)).toBe(4 * 2 ** 20);
    expect(statementBytes(64 * 2 ** 20)).toBe(4 * 2 ** 20);
    expect(statementBytes(1 * 2 ** 20)).toBe(2 ** 18);
  });

  it('writes placeholder groups', () => {
    expect(placeholderRows(2, 3)).toBe('(?, ?, ?), (?, ?, ?)');
    expect(placeholderRows(2, 2, '?, NOW()')).toBe('(?, NOW()), (?, NOW())');
    expect(placeholderList(3)).toBe('?, ?, ?');
  });
});

describe('slices', () => {
  it('cuts runs of at most size items, in order, the last one shorter', () => {
    expect(slices([1, 2, 3, 4, 5, 6, 7], 3)).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(slices([1, 2], 2)).toEqual([[1, 2]]);
    expect(slices([], 5)).toEqual([]);
  });
});
