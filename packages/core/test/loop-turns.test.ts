import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ADAPTIVE_MAX, ADAPTIVE_MIN, AdaptiveLimit, type TurnLimit } from '../src/loop/adaptive.js';
import { InstanceState } from '../src/instance.js';
import { GATE_REST_MS, GATE_WAIT_MS, ProcessTurns, processTurnsOf } from '../src/loop/gate.js';
import { loopTable } from '../src/loop/tables.js';

/** Lets every settled promise's callbacks run. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

/** Whether a getter asking `turns` now goes on within a few microtask turns (has the turn, or skips turns). */
const hasTurnAtOnce = async (turns: ProcessTurns): Promise<boolean> => {
  let went = false;
  void turns.take().then(() => (went = true));
  await settle();
  return went;
};

describe('ProcessTurns: the turns of Loop getters within one process', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
  afterEach(() => void vi.useRealTimers());

  it('gives the turn to one getter at a time, in the order they asked', async () => {
    const turns = new ProcessTurns();
    const order: string[] = [];
    const first = await turns.take();
    const rest = ['b', 'c', 'd'].map((name) => turns.take().then((end) => (order.push(name), end)));
    await settle();
    expect(order).toEqual([]);
    first();
    await settle();
    expect(order).toEqual(['b']);
    (await rest[0]!)();
    await settle();
    expect(order).toEqual(['b', 'c']);
    (await rest[1]!)();
    (await rest[2]!)();
    // Freed: the next getter has it at once.
    expect(await hasTurnAtOnce(turns)).toBe(true);
  });

  it('an end called twice hands the turn on once', async () => {
    const turns = new ProcessTurns();
    const end = await turns.take();
    const got: string[] = [];
    void turns.take().then(() => got.push('b'));
    void turns.take().then(() => got.push('c'));
    end();
    end();
    await settle();
    expect(got).toEqual(['b']);
  });

  it('a getter whose turn does not come within GATE_WAIT_MS goes on without it, and getters skip the turns for GATE_REST_MS', async () => {
    const turns = new ProcessTurns();
    await turns.take(); // a holder that stalls: never ends its turn
    let went = false;
    const waiter = turns.take().then((end) => ((went = true), end));
    await vi.advanceTimersByTimeAsync(GATE_WAIT_MS - 1);
    expect(went).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(went).toBe(true);
    (await waiter)(); // no turn was given: ending it frees nothing
    // Resting: the next getters go on at once, though the holder still holds its turn.
    expect(await hasTurnAtOnce(turns)).toBe(true);
    await vi.advanceTimersByTimeAsync(GATE_REST_MS);
    expect(await hasTurnAtOnce(turns)).toBe(false);
  });

  it('is shared by every handle of one taskrow instance that reaches the same loop on the same server, and by nothing else', () => {
    const t = loopTable('p_', 'crawl');
    const state = new InstanceState();
    const a = processTurnsOf(state, { server: 'db1:3306/app' }, 'p_', t);
    expect(processTurnsOf(new InstanceState(), { server: 'db1:3306/app' }, 'p_', t)).not.toBe(a);
    expect(processTurnsOf(state, { server: 'db1:3306/app' }, 'p_', t)).toBe(a);
    expect(processTurnsOf(state, { server: 'db2:3306/app' }, 'p_', t)).not.toBe(a);
    expect(processTurnsOf(state, { server: 'db1:3306/other' }, 'p_', t)).not.toBe(a);
    expect(processTurnsOf(state, { server: 'db1:3306/app' }, 'q_', loopTable('q_', 'crawl'))).not.toBe(a);
    expect(processTurnsOf(state, { server: 'db1:3306/app' }, 'p_', loopTable('p_', 'other'))).not.toBe(a);
    expect(processTurnsOf(state, {}, 'p_', t)).not.toBe(processTurnsOf(state, {}, 'p_', t));
    // Adaptive turns are their own, shared in the same way.
    const auto = processTurnsOf(state, { server: 'db1:3306/app' }, 'p_', t, true);
    expect(auto).not.toBe(a);
    expect(processTurnsOf(state, { server: 'db1:3306/app' }, 'p_', t, true)).toBe(auto);
  });
});

/** A limit whose number of turns the test sets, remembering what it was told of each turn. */
class SetLimit implements TurnLimit {
  readonly told: { ms: number; full: boolean }[] = [];
  constructor(public n: number) {}
  now(): number {
    return this.n;
  }
  ended(ms: number, full: boolean): void {
    this.told.push({ ms, full });
  }
}

describe('ProcessTurns with a limit of more than one turn (turns: auto)', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
  afterEach(() => void vi.useRealTimers());

  it('hands out as many turns at once as the limit allows, tells it how long each was held and whether all were taken', async () => {
    const limit = new SetLimit(2);
    const turns = new ProcessTurns(limit);
    const a = await turns.take();
    const b = await turns.take();
    let third = false;
    const c = turns.take().then((end) => ((third = true), end));
    await settle();
    expect(third).toBe(false);
    vi.advanceTimersByTime(7);
    a();
    await settle();
    expect(third).toBe(true);
    expect(limit.told).toEqual([{ ms: 7, full: false }]);
    vi.advanceTimersByTime(3);
    b();
    (await c)();
    // b began with every turn taken (a and b held), c when a's ended and handed its turn on.
    expect(limit.told).toEqual([
      { ms: 7, full: false },
      { ms: 10, full: true },
      { ms: 3, full: true },
    ]);
  });

  it('a getter behind turns that keep ending waits on past GATE_WAIT_MS; it gives up only when none ended for that long', async () => {
    const turns = new ProcessTurns(new SetLimit(1));
    const a = await turns.take();
    const b = turns.take();
    let went = false;
    const c = turns.take().then((end) => ((went = true), end));
    await vi.advanceTimersByTimeAsync(600);
    a(); // b's turn
    await vi.advanceTimersByTimeAsync(600);
    expect(went).toBe(false); // 1,200 ms after it asked, but a turn ended 600 ms ago: c waits on
    (await b)(); // c's turn
    await settle();
    expect(went).toBe(true);
    // c holds a real turn (had it given up, getters would now skip turns and go on at once).
    expect(await hasTurnAtOnce(turns)).toBe(false);
    (await c)();
  });

  it('an end not measured (a failed get) hands the turn on without telling the limit', async () => {
    const limit = new SetLimit(1);
    const turns = new ProcessTurns(limit);
    const end = await turns.take();
    let next = false;
    void turns.take().then(() => (next = true));
    end(false);
    await settle();
    expect(next).toBe(true);
    expect(limit.told).toEqual([]);
  });

  it('a limit that grows hands turns to the getters waiting at the next end; one that falls hands none on until fewer are held', async () => {
    const limit = new SetLimit(1);
    const turns = new ProcessTurns(limit);
    const first = await turns.take();
    const got: string[] = [];
    const waiters = ['b', 'c', 'd'].map((name) => turns.take().then((end) => (got.push(name), end)));
    limit.n = 3;
    first();
    await settle();
    expect(got).toEqual(['b', 'c', 'd']);
    limit.n = 1;
    const ends = await Promise.all(waiters);
    let next = false;
    void turns.take().then(() => (next = true));
    ends[0]!();
    ends[1]!();
    await settle();
    expect(next).toBe(false); // still one held, the limit is one
    ends[2]!();
    await settle();
    expect(next).toBe(true);
  });
});

describe('AdaptiveLimit: how many Loop get()s a process runs at once with turns: auto', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['performance'] }));
  afterEach(() => void vi.useRealTimers());

  /** Feeds `limit` `rounds` turns, each held `latency(n)` ms where n is the limit when it began. */
  const run = (limit: AdaptiveLimit, rounds: number, latency: (n: number) => number, full = true): void => {
    for (let i = 0; i < rounds; i++) {
      vi.advanceTimersByTime(1);
      limit.ended(latency(limit.now()), full);
    }
  };

  it('grows to its maximum while every turn is taken and latencies stay near the least (a slow network, a server with cores to spare)', () => {
    const limit = new AdaptiveLimit();
    run(limit, 2000, () => 5);
    expect(limit.now()).toBe(ADAPTIVE_MAX);
  });

  it('does not grow while turns are left over', () => {
    const limit = new AdaptiveLimit();
    const start = limit.now();
    run(limit, 500, () => 5, false);
    expect(limit.now()).toBe(start);
  });

  it('falls to a few turns when latencies grow with the turns held (getters queueing for the server)', () => {
    const limit = new AdaptiveLimit();
    run(limit, 2000, () => 5);
    expect(limit.now()).toBe(ADAPTIVE_MAX);
    // Two cores' worth of work: n getters at once each take n / 2 times as long.
    run(limit, 500, (n) => Math.max(5, (5 * n) / 2));
    expect(limit.now()).toBeLessThanOrEqual(6);
    // However slow, never below its floor.
    run(limit, 500, () => 5_000);
    expect(limit.now()).toBe(ADAPTIVE_MIN);
  });

  it('learns nothing from a latency of zero', () => {
    const limit = new AdaptiveLimit();
    run(limit, 20, () => 5);
    const before = limit.now();
    run(limit, 5, () => 0);
    run(limit, 50, () => 5);
    expect(limit.now()).toBeGreaterThan(before); // a least of 0 would have held it down
  });

  it('forgets its least latency at once after an idle gap of two windows', () => {
    const limit = new AdaptiveLimit();
    run(limit, 20, () => 1);
    vi.advanceTimersByTime(20_000);
    run(limit, 2000, () => 20);
    expect(limit.now()).toBe(ADAPTIVE_MAX);
  });

  it('forgets its least latency after two windows, so a network that became slower for good lets it grow again', () => {
    const limit = new AdaptiveLimit();
    run(limit, 20, () => 1);
    // From now on every get() takes 20 ms, whatever the number at once: measured against 1 ms, the limit falls.
    run(limit, 200, () => 20);
    expect(limit.now()).toBeLessThanOrEqual(3);
    // The window that saw 1 ms ends; the next still remembers it; the one after that does not.
    vi.advanceTimersByTime(10_000);
    run(limit, 1, () => 20);
    vi.advanceTimersByTime(10_000);
    run(limit, 2000, () => 20);
    expect(limit.now()).toBe(ADAPTIVE_MAX);
  });
});
