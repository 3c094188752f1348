import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import type { MissedPolicy } from '../../schedule/types.js';
import { probeRunAts, probeSchedule, shiftNextAt } from './probe.js';

const MIN = 60e6;

/** Missed-tick policies: time is moved by writing `next_at` through the probe, never by sleeping. */
export function scheduleMissed<Tx>(ctx: () => SuiteContext<Tx>): void {
  /** A schedule every 60 s whose 5 latest ticks passed without a scheduler: the ticks its pass enqueues, and the next tick after it. */
  async function afterGap(missed: MissedPolicy, gap = 5): Promise<{ runs: number[]; expectedFirst: number; nextUs: number | null; n0: number }> {
    const { session, prefix } = ctx();
    const s = session.taskrow.schedules();
    const [name, queue] = [freshName('s'), freshName('q')];
    await s.upsert(name, { queue, every: 60_000, missed });
    const n0 = (await probeSchedule(session.probe, prefix, name))!.nextUs!;
    await shiftNextAt(session.probe, prefix, name, -60 * gap);
    await s.runDue();
    const row = (await probeSchedule(session.probe, prefix, name))!;
    await s.remove(name);
    return { runs: await probeRunAts(session.probe, prefix, queue), expectedFirst: n0 - gap * MIN, nextUs: row.nextUs, n0 };
  }

  it("'once' (the default) enqueues one job, for the latest of 5 due ticks", async () => {
    const r = await afterGap('once');
    expect(r.runs).toEqual([r.n0 - MIN]);
    expect(r.nextUs).toBe(r.n0);
  });

  it("'skip' enqueues nothing after a gap, and the next tick is the first in the future", async () => {
    const r = await afterGap('skip');
    expect(r.runs).toEqual([]);
    expect(r.nextUs).toBe(r.n0);
  });

  it("'skip' still runs a tick handled before the next one is due", async () => {
    const r = await afterGap('skip', 1);
    expect(r.runs).toEqual([r.n0 - MIN]);
    expect(r.nextUs).toBe(r.n0);
  });

  it('{ each: 3 } enqueues the latest 3 of 5 due ticks; { each: 10 } all 5, one job per tick', async () => {
    const three = await afterGap({ each: 3 });
    expect(three.runs).toEqual([three.n0 - 3 * MIN, three.n0 - 2 * MIN, three.n0 - MIN]);
    expect(three.nextUs).toBe(three.n0);
    const all = await afterGap({ each: 10 });
    expect(all.runs).toEqual([0, 1, 2, 3, 4].map((k) => all.expectedFirst + k * MIN));
    expect(all.nextUs).toBe(all.n0);
  });

  it('a cron pattern in a time zone catches up on its own ticks: hourly at minute 0 in UTC+05:30, 3 hours missed', async () => {
    const { session, prefix } = ctx();
    const s = session.taskrow.schedules();
    const [name, queue] = [freshName('s'), freshName('q')];
    await s.upsert(name, { queue, cron: '0 0 * * * *', tz: 'Asia/Kolkata', missed: { each: 10 } });
    const n0 = (await probeSchedule(session.probe, prefix, name))!.nextUs!;
    await shiftNextAt(session.probe, prefix, name, -3 * 3600);
    expect(await s.runDue()).toBe(3);
    expect(await probeRunAts(session.probe, prefix, queue)).toEqual([3, 2, 1].map((h) => n0 - h * 3600e6));
    expect((await probeSchedule(session.probe, prefix, name))!.nextUs).toBe(n0);
    await s.remove(name);
  });
}
