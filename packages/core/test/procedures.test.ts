import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Executor } from '../src/engine/executor.js';
import { TaskrowError } from '../src/errors.js';
import { InstanceState } from '../src/instance.js';
import { callProcedure, mayCall, MISSING_RECHECK_MS } from '../src/queue/routines/call.js';

/** An executor over one server whose CALLs fail with `errno` until `heal()`, and answer `{ ok: 1 }` after. */
function server(errno: number) {
  const calls: string[] = [];
  let failing = true;
  const exec = {
    dialect: {},
    state: new InstanceState(),
    client: { joined: false, endsInterrupted: true },
    query: async (sql: string) => {
      calls.push(sql);
      if (failing) throw new TaskrowError('DATABASE_ERROR', `error ${errno}`, { errno });
      return { rows: [[{ ok: 1 }], {}], affectedRows: 0, insertId: 0 };
    },
  } as unknown as Executor;
  return { exec, calls, heal: () => void (failing = false) };
}

describe('procedures: a procedure found missing is tried again later', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['performance'] }));
  afterEach(() => void vi.useRealTimers());

  for (const errno of [1305, 1370]) {
    it(`after error ${errno}, not called for a while, then called again (created or granted meanwhile)`, async () => {
      const { exec, calls, heal } = server(errno);
      expect(mayCall(exec, 'p_enqueue')).toBe(true);
      expect(await callProcedure(exec, 'p_enqueue', [1])).toBeUndefined();
      expect(calls).toEqual(['CALL p_enqueue(?)']);
      expect(mayCall(exec, 'p_enqueue')).toBe(false);
      expect(mayCall(exec, 'p_other')).toBe(true); // only the procedure that failed
      vi.advanceTimersByTime(MISSING_RECHECK_MS - 1);
      expect(mayCall(exec, 'p_enqueue')).toBe(false);
      vi.advanceTimersByTime(1);
      expect(mayCall(exec, 'p_enqueue')).toBe(true);
      heal();
      expect(await callProcedure(exec, 'p_enqueue', [1])).toEqual({ ok: 1 });
      expect(mayCall(exec, 'p_enqueue')).toBe(true);
    });
  }

  it('any other error reaches the caller and leaves the procedure callable', async () => {
    const { exec } = server(1213);
    await expect(callProcedure(exec, 'p_ring', [])).rejects.toMatchObject({ errno: 1213 });
    expect(mayCall(exec, 'p_ring')).toBe(true);
  });

  it('is never called inside an application transaction, nor through a client that does not end an interrupted statement', () => {
    const joined = { ...server(1305).exec, client: { joined: true, endsInterrupted: true } } as unknown as Executor;
    const unended = { ...server(1305).exec, client: { joined: false } } as unknown as Executor;
    expect(mayCall(joined, 'p')).toBe(false);
    expect(mayCall(unended, 'p')).toBe(false);
  });
});
