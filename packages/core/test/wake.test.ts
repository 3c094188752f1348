import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { claimsSettled, onEnqueue, type Bell } from '../src/queue/wake.js';

/** Lets every settled promise's callbacks run. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

const bell = (): Bell => ({ group: undefined, ring: () => undefined, room: () => 1, stage: () => 'busy', cover: () => undefined });

/** Whether `p` has resolved once pending callbacks ran. */
const resolved = async (p: Promise<void>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  await settle();
  return done;
};

describe('claimsSettled: the doorbell waits for the claims it woke', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] }));
  afterEach(() => void vi.useRealTimers());

  it('resolves at once when no claim of the queue is in flight, or no worker of it exists', async () => {
    expect(await resolved(claimsSettled('jobs_a', 'none', 1000))).toBe(true);
    const w = onEnqueue('jobs_a', 'q', bell(), {});
    try {
      expect(await resolved(claimsSettled('jobs_a', 'q', 1000))).toBe(true);
    } finally {
      w.unsubscribe();
    }
  });

  it('resolves when the last claim in flight ends, not before', async () => {
    const source = {};
    const a = onEnqueue('jobs_b', 'q', bell(), source);
    const b = onEnqueue('jobs_b', 'q', bell(), source);
    try {
      const endA = a.claiming();
      const endB = b.claiming();
      const waiting = claimsSettled('jobs_b', 'q', 1000);
      expect(await resolved(waiting)).toBe(false);
      endA();
      endA(); // a second call of one claim's end counts once
      expect(await resolved(waiting)).toBe(false);
      endB();
      expect(await resolved(waiting)).toBe(true);
      // Claims of another queue are not waited for.
      const other = onEnqueue('jobs_b', 'other', bell(), source);
      other.claiming();
      expect(await resolved(claimsSettled('jobs_b', 'q', 1000))).toBe(true);
      other.unsubscribe();
    } finally {
      a.unsubscribe();
      b.unsubscribe();
    }
  });

  it('resolves after its bound when a claim does not end', async () => {
    const w = onEnqueue('jobs_c', 'q', bell(), {});
    try {
      w.claiming();
      const waiting = claimsSettled('jobs_c', 'q', 20);
      await vi.advanceTimersByTimeAsync(19);
      expect(await resolved(waiting)).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await resolved(waiting)).toBe(true);
    } finally {
      w.unsubscribe();
    }
  });
});
