import { expect, it } from 'vitest';
import type { SuiteContext } from '../session.js';
import { freshLoop, passTime, probeById, probeNow, probeRows, range, setTimes, snapshot } from './probe.js';

/** get(): the original's order, locks, minLoopTime, expired locks and dead workers. Time moves through the probe. */
export function loopGet<Tx>(ctx: () => SuiteContext<Tx>): void {
  it("gets in the original's order: super-bumped, bumped, never updated, then oldest update", async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(10, 19));
    await loop.did(19);
    await passTime(c.session.probe, loop.table, 100, [19]); // 19 was updated 100 s ago
    await loop.did(13);
    await loop.bump([14, 17]);
    await loop.bump([15, 11], { lockFor: 3_600_000 });
    await loop.bump([16, 12], { lockFor: -3_600_000 });
    expect(await loop.get(10, { minLoopTime: 0 })).toEqual([12, 16, 14, 17, 10, 18, 19, 13]);
  });

  it('orders expired locks by lock_until, then last_updated, then id', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(1, 6));
    const { probe } = c.session;
    const now = await probeNow(probe);
    await setTimes(probe, loop.table, 1, { lockUntil: -10, lastUpdated: -5 }, now);
    await setTimes(probe, loop.table, 2, { lockUntil: -10, lastUpdated: -50 }, now);
    await setTimes(probe, loop.table, 3, { lockUntil: -10, lastUpdated: null }, now);
    await setTimes(probe, loop.table, 4, { lockUntil: -300 }, now);
    await setTimes(probe, loop.table, 5, { lockUntil: 300 }, now); // locked: not returned
    expect(await loop.get(10)).toEqual([4, 3, 2, 1, 6]);
  });

  it('locks what it returns for lockFor seconds (default one hour) and never returns a locked id', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(10, 16));
    const before = await probeNow(c.session.probe);
    expect(await loop.get(5)).toEqual(range(10, 14));
    const after = await probeNow(c.session.probe);
    const rows = await probeById(c.session.probe, loop.table);
    for (const id of range(10, 14)) {
      expect(rows.get(String(id))!.lockUntil).toBeGreaterThanOrEqual(before + 3600);
      expect(rows.get(String(id))!.lockUntil).toBeLessThanOrEqual(after + 3600);
    }
    expect(await loop.get(5, { lockFor: 60_000 })).toEqual([15, 16]);
    const short = (await probeById(c.session.probe, loop.table)).get('15')!.lockUntil!;
    expect(short - before).toBeGreaterThanOrEqual(60);
    expect(short - before).toBeLessThanOrEqual(60 + (await probeNow(c.session.probe)) - before);
    expect(await loop.get(5)).toEqual([]);
  });

  it('returns updated ids only once minLoopTime has passed, oldest update first', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(1, 5));
    expect(await loop.did(range(1, 5))).toBe(5);
    expect(await loop.get(10)).toEqual([]);
    await passTime(c.session.probe, loop.table, 1800);
    expect(await loop.get(10)).toEqual([]);
    expect(await loop.get(10, { minLoopTime: 1_000_000 })).toHaveLength(5);
    await loop.unlock(range(1, 5));
    await passTime(c.session.probe, loop.table, 1800, [2, 4]); // 2 and 4: one hour old, the rest half an hour
    await passTime(c.session.probe, loop.table, 10, [4]); // 4 is the oldest
    expect(await loop.get(10)).toEqual([4, 2]);
    expect(await loop.get(10, { minLoopTime: 0 })).toEqual([1, 3, 5]);
  });

  it("gives a dead worker's ids back first once its lockFor has passed", async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(1, 20));
    const { clients, close } = await c.session.openClients(1);
    const dead = await clients[0]!.loop(loop.name, { idType: 'int' }).get(5, { lockFor: 60_000 });
    await close(); // the worker dies without did() or unlock()
    expect(dead).toEqual(range(1, 5));
    expect(await loop.get(3)).toEqual([6, 7, 8]);
    await passTime(c.session.probe, loop.table, 50, dead);
    expect(await loop.get(2)).toEqual([9, 10]); // 10 s left on the dead worker's lock
    await passTime(c.session.probe, loop.table, 10, dead);
    expect(await loop.get(4)).toEqual([1, 2, 3, 4]);
    expect(await loop.get(4)).toEqual([5, 11, 12, 13]);
    const rows = await probeRows(c.session.probe, loop.table);
    expect(rows.filter((r) => r.lockUntil !== null).map((r) => Number(r.id))).toEqual(range(1, 13));
  });

  it('returns [] on an empty loop or when everything is locked, and limit 0 changes nothing', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    expect(await loop.get(100)).toEqual([]);
    await loop.add([1, 2]);
    const before = await snapshot(c.session.probe, loop.table);
    expect(await loop.get(0)).toEqual([]);
    expect(await snapshot(c.session.probe, loop.table)).toBe(before);
    expect(await loop.get(100)).toEqual([1, 2]);
    expect(await loop.get(100)).toEqual([]);
  });
}
