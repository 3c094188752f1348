import { describe, expect, it } from 'vitest';
import { classify } from '../src/retry.js';

describe('classify', () => {
  it('retries deadlocks and lock wait timeouts, treats lost connections apart, never retries the rest', () => {
    expect(classify({ errno: 1213 })).toBe('retryable');
    expect(classify({ errno: 1205 })).toBe('retryable');
    expect(classify({ errno: 1020 })).toBe('retryable');
    expect(classify({ errno: 2013 })).toBe('lost');
    expect(classify({ code: 'PROTOCOL_CONNECTION_LOST', lost: true })).toBe('lost');
    expect(classify({ errno: 1146 })).toBe('missing-table');
    expect(classify({ errno: 1062 })).toBe('other');
    expect(classify({ errno: 1213, closed: true })).toBe('closed');
  });
});
