import { describe, expect, it } from 'vitest';
import { classify, isCertificationFailure, noteRaisedAtCommit } from '../src/retry.js';

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

  it('tells a certification failure (3101 anywhere, a retryable error raised by COMMIT) from a plain deadlock', () => {
    const atCommit = Object.assign(new Error('deadlock'), { errno: 1213 });
    const inStatement = Object.assign(new Error('deadlock'), { errno: 1213 });
    const duplicate = Object.assign(new Error('duplicate'), { errno: 1062 });
    noteRaisedAtCommit(atCommit);
    noteRaisedAtCommit(duplicate);
    expect(isCertificationFailure({ errno: 1213 }, atCommit)).toBe(true);
    expect(isCertificationFailure({ errno: 1213 }, inStatement)).toBe(false);
    expect(isCertificationFailure({ errno: 3101 }, inStatement)).toBe(true);
    expect(isCertificationFailure({ errno: 1062 }, duplicate)).toBe(false);
    expect(isCertificationFailure({ errno: 1213, closed: true }, atCommit)).toBe(false);
  });
});
