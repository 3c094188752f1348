import { expect, it } from 'vitest';
import type { SuiteContext } from '../session.js';
import { freshLoop, probeById, range, snapshot } from './probe.js';

/** dryRun on every writer: the original's test=True. */
export function loopDryRun<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('runs every writer, rolls it back and returns what it would have returned', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(10, 19));
    await loop.get(2); // 10, 11 locked
    await loop.did(12);
    const before = await snapshot(c.session.probe, loop.table);
    const dry = { dryRun: true } as const;
    expect(await loop.add([19, 20, 21], dry)).toBe(2);
    expect(await loop.add([22], { ...dry, updated: true })).toBe(1);
    expect(await loop.remove([10, 11, 99], dry)).toBe(2);
    expect(await loop.get(3, dry)).toEqual([13, 14, 15]);
    expect(await loop.get(3, { ...dry, minLoopTime: 0 })).toEqual([13, 14, 15]);
    expect(await loop.did([13, 14, 77], dry)).toBe(3);
    expect(await loop.did([13, 77], { ...dry, autoAdd: false })).toBe(1);
    expect(await loop.unlock([10, 11, 78], dry)).toBe(3);
    expect(await loop.unlock([10, 78], { ...dry, autoAdd: false })).toBe(1);
    expect(await loop.bump([15, 79], dry)).toBe(2);
    expect(await loop.bump([15, 79], { ...dry, autoAdd: false })).toBe(1);
    expect(await snapshot(c.session.probe, loop.table)).toBe(before);
    // A dry get locked nothing: a real one returns the same ids.
    expect(await loop.get(3)).toEqual([13, 14, 15]);
  });

  it('rolls a dry run back to a savepoint inside an application transaction, keeping the transaction', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(1, 5));
    await c.session.withDriverTransaction('commit', async (tx) => {
      const inTx = c.session.taskrow.in(tx).loop(loop.name, { idType: 'int' });
      expect(await inTx.did(1)).toBe(1);
      expect(await inTx.get(2, { dryRun: true })).toEqual([2, 3]);
      expect(await inTx.remove([2, 3], { dryRun: true })).toBe(2);
      expect(await inTx.get(1)).toEqual([2]);
    });
    const rows = await probeById(c.session.probe, loop.table);
    expect(rows.get('1')!.lastUpdated).not.toBeNull();
    expect(rows.get('2')!.lockUntil).not.toBeNull();
    expect(rows.get('3')!.lockUntil).toBeNull();
    expect(rows.size).toBe(5);
  });
}
