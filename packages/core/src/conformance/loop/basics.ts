import { expect, it } from 'vitest';
import type { SuiteContext } from '../session.js';
import { freshLoop, probeById, probeIds, probeNow, probeRows, range, setTimes } from './probe.js';

/** add / remove / did / unlock / check, each verified through the probe. */
export function loopBasics<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('add counts only new ids (duplicates once, sets and generators accepted) and leaves them never updated and unlocked', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    expect(await loop.add(42)).toBe(1);
    expect(await loop.add(42)).toBe(0);
    expect(await loop.add([42, 43])).toBe(1);
    expect(await loop.add(new Set([43, 44, 45]))).toBe(2);
    expect(await loop.add([46, 46, 47])).toBe(2);
    expect(
      await loop.add(
        (function* () {
          yield 48;
          yield 49;
        })(),
      ),
    ).toBe(2);
    const rows = await probeRows(c.session.probe, loop.table);
    expect(rows.map((r) => r.id)).toEqual(range(42, 49).map(String));
    expect(rows.every((r) => r.lastUpdated === null && r.lockUntil === null)).toBe(true);
  });

  it('add with updated sets last_updated to the database clock, and never touches existing ids', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(1);
    const before = await probeNow(c.session.probe);
    expect(await loop.add([1, 2, 3], { updated: true })).toBe(2);
    const after = await probeNow(c.session.probe);
    const rows = await probeById(c.session.probe, loop.table);
    expect(rows.get('1')!.lastUpdated).toBeNull();
    for (const id of ['2', '3']) {
      expect(rows.get(id)!.lastUpdated).toBeGreaterThanOrEqual(before);
      expect(rows.get(id)!.lastUpdated).toBeLessThanOrEqual(after);
    }
    // Updated ids wait for minLoopTime; the never-updated one does not.
    expect(await loop.get(10)).toEqual([1]);
    expect(await loop.get(10, { minLoopTime: 0 })).toEqual([2, 3]);
  });

  it('remove counts the ids that were in the loop', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(10, 14));
    expect(await loop.remove(10)).toBe(1);
    expect(await loop.remove(10)).toBe(0);
    expect(await loop.remove([11, 13])).toBe(2);
    expect(await loop.remove(new Set([11, 12, 13]))).toBe(1);
    expect(await probeIds(c.session.probe, loop.table)).toEqual(['14']);
    expect(await loop.get(10)).toEqual([14]);
  });

  it('did marks ids updated now and unlocks them; auto-adds unknown ids unless autoAdd is false', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(10, 14));
    expect(await loop.get(3)).toEqual([10, 11, 12]);
    const before = await probeNow(c.session.probe);
    expect(await loop.did([10, 11, 99])).toBe(3);
    const after = await probeNow(c.session.probe);
    const rows = await probeById(c.session.probe, loop.table);
    for (const id of ['10', '11', '99']) {
      expect(rows.get(id)!.lockUntil).toBeNull();
      expect(rows.get(id)!.lastUpdated).toBeGreaterThanOrEqual(before);
      expect(rows.get(id)!.lastUpdated).toBeLessThanOrEqual(after);
    }
    expect(rows.get('12')!.lockUntil).not.toBeNull(); // still held by the get
    expect(await loop.did([10, 11, 99])).toBe(3); // again at once: nothing changes, every id still counts
    expect(await loop.did([13, 333], { autoAdd: false })).toBe(1);
    expect((await probeById(c.session.probe, loop.table)).has('333')).toBe(false);
    // did ids wait for minLoopTime: only 14 is left to get.
    expect(await loop.get(10)).toEqual([14]);
  });

  it('unlock clears the lock without marking the ids updated, so they keep their priority', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(10, 19));
    const ids = await loop.get(5);
    expect(ids).toEqual(range(10, 14));
    expect(await loop.unlock(ids)).toBe(5);
    const rows = await probeRows(c.session.probe, loop.table);
    expect(rows.every((r) => r.lockUntil === null && r.lastUpdated === null)).toBe(true);
    expect(await loop.get(10)).toEqual(range(10, 19));
    expect(await loop.get(10)).toEqual([]);
    expect(await loop.unlock(13)).toBe(1);
    expect(await loop.get(10)).toEqual([13]);
  });

  it('unlock auto-adds unknown ids unless autoAdd is false', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(111);
    expect(await loop.unlock([111, 222])).toBe(2);
    expect(await loop.unlock(333, { autoAdd: false })).toBe(0);
    expect(await probeIds(c.session.probe, loop.table)).toEqual(['111', '222']);
    expect(await loop.get(10)).toEqual([111, 222]);
  });

  it('check reports milliseconds since update and milliseconds locked for, null when unset, leaving absent ids out', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(10, 19));
    expect(await loop.check(10)).toEqual(new Map([[10, { sinceUpdated: null, lockedFor: null }]]));
    expect(await loop.check([18, 19, 20])).toEqual(
      new Map([
        [18, { sinceUpdated: null, lockedFor: null }],
        [19, { sinceUpdated: null, lockedFor: null }],
      ]),
    );
    expect(await loop.check(20)).toEqual(new Map());
    expect(await loop.get(2)).toEqual([10, 11]);
    await loop.did(11);
    await loop.bump(12);
    await setTimes(c.session.probe, loop.table, 13, { lastUpdated: -500, lockUntil: -40 });
    const status = await loop.check([10, 11, 12, 13]);
    expect([...status.keys()].sort()).toEqual([10, 11, 12, 13]);
    expect(status.get(10)!.sinceUpdated).toBeNull();
    expect(status.get(10)!.lockedFor).toBeGreaterThanOrEqual(3_600_000 - 2000);
    expect(status.get(10)!.lockedFor).toBeLessThanOrEqual(3_600_000);
    expect(status.get(11)!.sinceUpdated).toBeGreaterThanOrEqual(0);
    expect(status.get(11)!.sinceUpdated).toBeLessThanOrEqual(2000);
    expect(status.get(11)!.lockedFor).toBeNull();
    expect(status.get(12)!.sinceUpdated).toBeNull();
    expect(status.get(12)!.lockedFor).toBeGreaterThanOrEqual(-2000);
    expect(status.get(12)!.lockedFor).toBeLessThanOrEqual(0);
    expect(status.get(13)!.sinceUpdated).toBeGreaterThanOrEqual(500_000);
    expect(status.get(13)!.sinceUpdated).toBeLessThanOrEqual(502_000);
    expect(status.get(13)!.lockedFor).toBeGreaterThanOrEqual(-42_000);
    expect(status.get(13)!.lockedFor).toBeLessThanOrEqual(-40_000);
  });

  it('writes batches larger than one statement in full', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    const ids = range(1, 4500);
    expect(await loop.add(ids)).toBe(4500);
    expect(await loop.did(ids.filter((i) => i % 2 === 0))).toBe(2250);
    expect((await loop.check(ids)).size).toBe(4500);
    expect(await loop.get(5000, { minLoopTime: 3_600_000 })).toHaveLength(2250);
    const rows = await probeRows(c.session.probe, loop.table);
    expect(rows.filter((r) => r.lockUntil !== null)).toHaveLength(2250);
    expect(await loop.remove(ids)).toBe(4500);
    expect(await probeIds(c.session.probe, loop.table)).toEqual([]);
  });
}
