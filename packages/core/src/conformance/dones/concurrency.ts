import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeKeys } from './probe.js';

/** Clients for the many-clients case: TASKROW_CONFORMANCE_CLIENTS, default 1000. */
function clientCount(): number {
  const n = Number(process.env['TASKROW_CONFORMANCE_CLIENTS'] ?? 1000);
  return Number.isInteger(n) && n > 0 ? n : 1000;
}

/** Many separate connections marking overlapping keys at once: no error, no lost mark. */
export function donesConcurrency<Tx>(ctx: () => SuiteContext<Tx>): void {
  it(`${clientCount()} concurrent clients mark overlapping keys: no error reaches a caller and no mark is lost`, async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    const n = clientCount();
    const { clients, close } = await session.openClients(n);
    try {
      // Client i marks keys i*5 .. i*5+19 (mod 3n): every key is marked by about four clients,
      // in a different order each (half the clients reverse their batch).
      const universe = 3 * n;
      const batches = clients.map((_, i) => {
        const keys = Array.from({ length: 20 }, (_, j) => `shared-${(i * 5 + j) % universe}`);
        return i % 2 === 0 ? keys : keys.reverse();
      });
      const results = await Promise.allSettled(clients.map((c, i) => c.dones(ns).mark(batches[i]!)));
      const failures = results.filter((r) => r.status === 'rejected');
      expect(failures.map((f) => String((f as PromiseRejectedResult).reason))).toEqual([]);
      const expected = [...new Set(batches.flat())].sort();
      expect(await probeKeys(session.probe, prefix, ns)).toEqual(expected);
      // Each key was counted as new by exactly one client.
      const added = results.reduce((s, r) => s + (r.status === 'fulfilled' ? r.value : 0), 0);
      expect(added).toBe(expected.length);
    } finally {
      await close();
    }
  });
}
