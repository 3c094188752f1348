import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeKeys } from './probe.js';

/** Writes through `taskrow.in(tx)` commit and roll back with the application's transaction. */
export function donesTransactions<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('rolls back with the application transaction: the probe sees nothing', async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    await session.withDriverTransaction('rollback', async (tx) => {
      expect(await session.taskrow.in(tx).dones(ns).mark(['r1', 'r2'])).toBe(2);
      expect(await session.taskrow.in(tx).dones(ns).isDone('r1')).toBe(true);
    });
    expect(await probeKeys(session.probe, prefix, ns)).toEqual([]);
    expect(await session.taskrow.dones(ns).isDone('r1')).toBe(false);
  });

  it('commits with the application transaction: invisible before, visible after', async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    await session.taskrow.dones(ns).mark('seed'); // the namespace exists, so the probe can see the new key
    await session.withDriverTransaction('commit', async (tx) => {
      await session.taskrow.in(tx).dones(ns).mark('c1');
      expect(await probeKeys(session.probe, prefix, ns)).toEqual(['seed']);
    });
    expect(await probeKeys(session.probe, prefix, ns)).toEqual(['c1', 'seed']);
  });
}
