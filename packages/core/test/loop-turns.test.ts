import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
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

  it('is shared by every client of the process that reaches the same loop on the same server, and by nothing else', () => {
    const t = loopTable('p_', 'crawl');
    const a = processTurnsOf({ server: 'db1:3306/app' }, 'p_', t);
    expect(processTurnsOf({ server: 'db1:3306/app' }, 'p_', t)).toBe(a);
    expect(processTurnsOf({ server: 'db2:3306/app' }, 'p_', t)).not.toBe(a);
    expect(processTurnsOf({ server: 'db1:3306/other' }, 'p_', t)).not.toBe(a);
    expect(processTurnsOf({ server: 'db1:3306/app' }, 'q_', loopTable('q_', 'crawl'))).not.toBe(a);
    expect(processTurnsOf({ server: 'db1:3306/app' }, 'p_', loopTable('p_', 'other'))).not.toBe(a);
    expect(processTurnsOf({}, 'p_', t)).not.toBe(processTurnsOf({}, 'p_', t));
  });
});
