import { expect, it } from 'vitest';
import type { SuiteContext } from '../session.js';
import { freshLoop, probeById, probeIds, snapshot } from './probe.js';

/** Writes through `taskrow.in(tx)` commit and roll back with the application's transaction. */
export function loopTransactions<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('a did() inside the application transaction rolls back with it: the probe sees nothing', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add([1, 2, 3]);
    const before = await snapshot(c.session.probe, loop.table);
    await c.session.withDriverTransaction('rollback', async (tx) => {
      const inTx = c.session.taskrow.in(tx).loop(loop.name, { idType: 'int' });
      expect(await inTx.did([1, 2, 50])).toBe(3);
      expect((await inTx.check(50)).size).toBe(1); // visible inside the transaction
    });
    expect(await snapshot(c.session.probe, loop.table)).toBe(before);
    expect(await loop.get(5)).toEqual([1, 2, 3]);
  });

  it('a did() inside the application transaction commits with it: invisible before, visible after', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add([1, 2, 3]);
    await c.session.withDriverTransaction('commit', async (tx) => {
      await c.session.taskrow.in(tx).loop(loop.name).did([2, 60]);
      expect(await probeIds(c.session.probe, loop.table)).toEqual(['1', '2', '3']);
      expect((await probeById(c.session.probe, loop.table)).get('2')!.lastUpdated).toBeNull();
    });
    const rows = await probeById(c.session.probe, loop.table);
    expect([...rows.keys()]).toEqual(['1', '2', '3', '60']);
    expect(rows.get('2')!.lastUpdated).not.toBeNull();
    expect(rows.get('60')!.lastUpdated).not.toBeNull();
    expect(await loop.get(5)).toEqual([1, 3]);
  });

  it('a get() inside the application transaction locks with it: rolled back, its ids are free again; committed, they stay locked', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add([1, 2, 3, 4]);
    await c.session.withDriverTransaction('rollback', async (tx) => {
      expect(await c.session.taskrow.in(tx).loop(loop.name).get(2)).toEqual([1, 2]);
    });
    let rows = await probeById(c.session.probe, loop.table);
    expect([...rows.values()].every((r) => r.lockUntil === null)).toBe(true);
    await c.session.withDriverTransaction('commit', async (tx) => {
      expect(await c.session.taskrow.in(tx).loop(loop.name).get(2)).toEqual([1, 2]);
      expect((await probeById(c.session.probe, loop.table)).get('1')!.lockUntil).toBeNull(); // not yet committed
    });
    rows = await probeById(c.session.probe, loop.table);
    expect(rows.get('1')!.lockUntil).not.toBeNull();
    expect(rows.get('2')!.lockUntil).not.toBeNull();
    expect(await loop.get(5)).toEqual([3, 4]);
  });
}
