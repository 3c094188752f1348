import { describe, expect, it } from 'vitest';
import { TaskrowError } from '../src/errors.js';
import { LeaseLostError } from '../src/queue/model/errors.js';
import { backoffMs, claimArgs, errorText, jobRow, MAX_ERROR_CHARS, queueSettings } from '../src/queue/model/options.js';
import { decodePayload, encodePayload, MAX_PAYLOAD_BYTES } from '../src/queue/model/payload.js';

const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TaskrowError);
    return (err as TaskrowError).code;
  }
  return undefined;
};

describe('queue payloads', () => {
  it('encodes JSON values and round-trips them', () => {
    const cases: [unknown, unknown][] = [
      [null, null],
      [0, 0],
      ['x', 'x'],
      [
        [1, [2]],
        [1, [2]],
      ],
      [{ a: { b: [true] } }, { a: { b: [true] } }],
      [{ d: new Date(0) }, { d: '1970-01-01T00:00:00.000Z' }],
      [{ skip: undefined, keep: 1 }, { keep: 1 }],
      ['😀', '😀'],
    ];
    for (const [v, back] of cases) expect(decodePayload(encodePayload(v))).toEqual(back);
    const shared = { s: 1 };
    expect(encodePayload({ a: shared, b: shared })).toBe('{"a":{"s":1},"b":{"s":1}}'); // shared, not a cycle
  });

  it('rejects what JSON would drop or change, naming the path', () => {
    const cycle: unknown[] = [];
    cycle.push(cycle);
    const cases: [unknown, string][] = [
      [undefined, 'undefined'],
      [() => 1, 'function'],
      [{ a: { b: () => 1 } }, 'payload.a.b is a function'],
      [[1, 2n], 'payload[1] is a BigInt'],
      [[undefined], 'payload[0] is undefined'],
      [{ n: -Infinity }, '-Infinity'],
      [new Set([1]), 'Set'],
      [cycle, 'cycle'],
      [{ a: [{ b: [1, 'x', { c: NaN }] }] }, 'payload.a[0].b[2].c is the number NaN'],
      [{ a: [true, { toJSON: () => new Map() }] }, 'payload.a[1].toJSON() is a Map'],
      [
        {
          a: {
            toJSON: () => {
              throw new Error('no');
            },
          },
        },
        'payload.a.toJSON() threw: no',
      ],
      // biome-ignore lint/suspicious/noSparseArray: a hole is what this case is about.
      [[1, , 3], 'payload[1] is a hole'],
    ];
    for (const [v, says] of cases) {
      expect(() => encodePayload(v)).toThrow(says);
      expect(code(() => encodePayload(v))).toBe('INVALID_ARGUMENT');
    }
    expect(encodePayload({ skipped: undefined, kept: 1 })).toBe('{"kept":1}');
  });

  it('enforces the byte limit in UTF-8', () => {
    expect(Buffer.byteLength(encodePayload('x'.repeat(MAX_PAYLOAD_BYTES - 2)))).toBe(MAX_PAYLOAD_BYTES);
    expect(() => encodePayload('x'.repeat(MAX_PAYLOAD_BYTES - 1))).toThrow(String(MAX_PAYLOAD_BYTES));
    expect(() => encodePayload('€'.repeat(MAX_PAYLOAD_BYTES / 3))).toThrow(String(MAX_PAYLOAD_BYTES));
  });
});

describe('queue options', () => {
  const s = queueSettings(undefined);

  it('has documented defaults', () => {
    expect(s).toEqual({ maxAttempts: 5, backoffBase: 1000, backoffMax: 3_600_000, keepFinishedFor: 0 });
    expect(code(() => queueSettings({ backoff: { base: 10_000, max: 5000 } }))).toBe('INVALID_ARGUMENT');
    expect(code(() => queueSettings({ keepFinishedFor: -1000 }))).toBe('INVALID_ARGUMENT');
    expect(code(() => queueSettings({ maxAttempts: 0 }))).toBe('INVALID_ARGUMENT');
  });

  it('builds rows with run times in UTC microseconds', () => {
    const r = jobRow({ a: 1 }, { runAt: new Date(Date.UTC(2030, 4, 6, 7, 8, 9, 123)), priority: -2, group: 'g', dedupKey: 'k' }, s, 'job');
    expect(r).toMatchObject({ runAt: '2030-05-06 07:08:09.123000', priority: -2, group: 'g', delayed: true, delayMicros: 0, maxAttempts: 5 });
    expect(r.dedup?.toString()).toBe('k');
    expect(jobRow(1, { delay: 1500 }, s, 'job')).toMatchObject({ runAt: null, delayMicros: 1_500_000, delayed: true });
    expect(jobRow(1, undefined, s, 'job')).toMatchObject({ delayed: false, group: '', dedup: null });
    expect(code(() => jobRow(1, { runAt: new Date('1969-12-31T00:00:00Z') }, s, 'job'))).toBe('INVALID_ARGUMENT');
  });

  it('validates claim arguments', () => {
    expect(claimArgs({ limit: 3, lease: 500 })).toEqual({ limit: 3, leaseMicros: 500_000, group: undefined });
    expect(code(() => claimArgs({ limit: 3, lease: 0 }))).toBe('INVALID_ARGUMENT');
    expect(code(() => claimArgs({ limit: -1, lease: 1000 }))).toBe('INVALID_ARGUMENT');
    expect(code(() => claimArgs({ limit: 1, lease: 1000, group: 'bad name' }))).toBe('INVALID_NAME');
  });

  it('backs off exponentially with jitter between half and all of the step, capped', () => {
    const t = queueSettings({ backoff: { base: 2000, max: 20_000 } });
    for (let i = 0; i < 200; i++) {
      const [a1, a3, a9] = [backoffMs(1, t), backoffMs(3, t), backoffMs(9, t)];
      expect(a1).toBeGreaterThanOrEqual(1000);
      expect(a1).toBeLessThanOrEqual(2000);
      expect(a3).toBeGreaterThanOrEqual(4000);
      expect(a3).toBeLessThanOrEqual(8000);
      expect(a9).toBeGreaterThanOrEqual(10_000);
      expect(a9).toBeLessThanOrEqual(20_000);
    }
  });

  it('keeps error texts bounded and well-formed', () => {
    expect(errorText('plain')).toBe('plain');
    expect(errorText({ code: 1 })).toBe('{"code":1}');
    expect(errorText(new Error('boom'))).toContain('boom');
    const long = errorText('😀'.repeat(MAX_ERROR_CHARS));
    expect(long.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
    expect((long as string & { isWellFormed(): boolean }).isWellFormed()).toBe(true);
  });
});

describe('LeaseLostError', () => {
  it('lists lost and applied ids with code LEASE_LOST', () => {
    const e = new LeaseLostError('complete', [3, 4], [5]);
    expect(e).toBeInstanceOf(TaskrowError);
    expect(e.code).toBe('LEASE_LOST');
    expect(e.lost).toEqual([3, 4]);
    expect(e.applied).toEqual([5]);
    expect(e.message).toContain('jobs 3, 4');
  });
});
