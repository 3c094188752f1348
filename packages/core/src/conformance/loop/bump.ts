import { expect, it } from 'vitest';
import type { SuiteContext } from '../session.js';
import { freshLoop, passTime, probeById, probeIds, probeNow, range, setTimes } from './probe.js';

/** bump(): priority through lock_until, which it only ever lowers. */
export function loopBump<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('bumps to the top: negative lockFor above zero, positive locks first', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(10, 19));
    expect(await loop.bump(19)).toBe(1);
    expect(await loop.bump([17, 12], { lockFor: -10_000 })).toBe(2);
    expect(await loop.bump([13, 18], { lockFor: 10_000 })).toBe(2);
    const now = await probeNow(c.session.probe);
    const rows = await probeById(c.session.probe, loop.table);
    expect(rows.get('17')!.lockUntil).toBeLessThanOrEqual(now - 10);
    expect(rows.get('13')!.lockUntil).toBeGreaterThan(now);
    expect(await loop.get(5)).toEqual([12, 17, 19, 10, 11]);
  });

  it('only ever lowers lock_until, so repeated bumps cannot keep an id locked', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(1, 9));
    expect(await loop.bump(7, { lockFor: 100_000 })).toBe(1);
    expect(await loop.bump(7, { lockFor: 100_000 })).toBe(0);
    expect(await loop.bump(7, { lockFor: 1_000_000 })).toBe(0);
    const locked = (await probeById(c.session.probe, loop.table)).get('7')!.lockUntil!;
    await passTime(c.session.probe, loop.table, 60, [7]);
    expect(await loop.bump(7, { lockFor: 100_000 })).toBe(0); // would raise it: refused
    expect((await probeById(c.session.probe, loop.table)).get('7')!.lockUntil).toBe(locked - 60);
    expect(await loop.get(1)).toEqual([1]); // 7 is still locked
    await passTime(c.session.probe, loop.table, 40, [7]);
    expect(await loop.get(1)).toEqual([7]); // its lock ran out: top priority
  });

  it('lowers a longer lock, including one taken by get(), making the id available again', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(1, 5));
    await setTimes(c.session.probe, loop.table, 5, { lockUntil: 100 });
    expect(await loop.bump(5, { lockFor: 50_000 })).toBe(1);
    const now = await probeNow(c.session.probe);
    const l5 = (await probeById(c.session.probe, loop.table)).get('5')!.lockUntil!;
    expect(l5).toBeLessThanOrEqual(now + 50);
    expect(l5).toBeGreaterThanOrEqual(now + 48);
    expect(await loop.get(1)).toEqual([1]);
    expect(await loop.bump(1)).toBe(1);
    expect(await loop.get(1)).toEqual([1]);
  });

  it('a positive bump of an unlocked id locks it until lockFor passes', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(10, 19));
    expect(await loop.bump(17, { lockFor: 300_000 })).toBe(1);
    expect(await loop.get(1)).toEqual([10]);
    await passTime(c.session.probe, loop.table, 200, [17]);
    expect(await loop.get(1)).toEqual([11]);
    await passTime(c.session.probe, loop.table, 100, [17]);
    expect(await loop.get(1)).toEqual([17]);
  });

  it('auto-adds unknown ids unless autoAdd is false', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(10, 19));
    expect(await loop.bump([7, 17])).toBe(2);
    expect(await loop.bump([19, 25], { lockFor: -10_000, autoAdd: false })).toBe(1);
    expect(await probeIds(c.session.probe, loop.table)).toEqual(['7', ...range(10, 19).map(String)]);
    expect(await loop.get(5)).toEqual([19, 7, 17, 10, 11]);
  });
}
