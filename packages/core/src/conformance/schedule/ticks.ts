import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import { rejection } from '../expect.js';
import type { SuiteContext } from '../session.js';
import { probeJobs, until } from '../queue/probe.js';
import type { Scheduler } from '../../schedule/types.js';
import { probeRunAts, probeSchedule, shiftNextAt } from './probe.js';

/** One job per tick: run by `runDue()` and by started schedulers, with several schedulers racing. */
export function scheduleTicks<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('a due tick enqueues one job with the stored payload and options, run at the tick; the next tick moves on', async () => {
    const { session, prefix } = ctx();
    const s = session.taskrow.schedules();
    const [name, queue] = [freshName('s'), freshName('q')];
    await s.upsert(name, { queue, every: 60_000, payload: { n: 1 }, options: { priority: 7, group: 'g', maxAttempts: 2 } });
    expect(await s.runDue()).toBe(0); // not due yet
    const tick = (await probeSchedule(session.probe, prefix, name))!.nextUs! - 60e6;
    await shiftNextAt(session.probe, prefix, name, -60);
    expect(await s.runDue()).toBe(1);
    expect(await s.runDue()).toBe(0);
    const jobs = await probeJobs(session.probe, prefix, queue);
    expect(jobs.map((j) => [j.state, j.payload, j.priority, j.group, j.maxAttempts])).toEqual([['ready', { n: 1 }, 7, 'g', 2]]);
    expect(await probeRunAts(session.probe, prefix, queue)).toEqual([tick]);
    const row = (await probeSchedule(session.probe, prefix, name))!;
    expect(row.nextUs).toBe(tick + 60e6);
    expect(row.lastUs).toBe(tick);
    expect((await s.get(name))!.lastAt!.getTime()).toBe(tick / 1000);
    await s.remove(name);
  });

  it('a delay runs each job that long after its tick; with a dedup key a tick enqueues nothing while the previous job is live', async () => {
    const { session, prefix } = ctx();
    const s = session.taskrow.schedules();
    const [name, queue] = [freshName('s'), freshName('q')];
    await s.upsert(name, { queue, every: 60_000, options: { delay: 30_000, dedupKey: 'one-at-a-time' } });
    const tick = (await probeSchedule(session.probe, prefix, name))!.nextUs! - 60e6;
    await shiftNextAt(session.probe, prefix, name, -60);
    expect(await s.runDue()).toBe(1);
    await shiftNextAt(session.probe, prefix, name, -60);
    expect(await s.runDue()).toBe(0); // deduplicated: the first job is still delayed
    expect((await probeSchedule(session.probe, prefix, name))!.nextUs).toBe(tick + 60e6); // the tick was handled
    const jobs = await probeJobs(session.probe, prefix, queue);
    expect(jobs.map((j) => [j.state, j.dedup])).toEqual([['delayed', 'one-at-a-time']]);
    expect(await probeRunAts(session.probe, prefix, queue)).toEqual([tick + 30e6]);
    await s.remove(name);
  });

  it('a schedule whose stored row cannot be used fails its own tick only: the others get their jobs, the pass then rejects', async () => {
    const { session, prefix } = ctx();
    const s = session.taskrow.schedules();
    const [bad, good, queue] = [freshName('s'), freshName('s'), freshName('q')];
    await s.upsert(bad, { queue, every: 60_000, payload: 'bad' });
    await s.upsert(good, { queue, every: 60_000, payload: 'good' });
    await session.probe.query(`UPDATE \`${prefix}queue_schedules\` SET options = '{"priority":99999}' WHERE name = ?`, [bad]);
    for (const name of [bad, good]) await shiftNextAt(session.probe, prefix, name, -60);
    expect((await rejection(() => s.runDue(), 'INVALID_ARGUMENT')).message).toContain(
      `schedule "${bad}" job priority must be an integer from -32768 to 32767, got 99999`,
    );
    expect((await probeJobs(session.probe, prefix, queue)).map((j) => j.payload)).toEqual(['good']);
    expect((await probeSchedule(session.probe, prefix, bad))!.lastUs).toBeNull(); // its tick is still due, nothing half-done
    await s.remove(bad);
    await s.remove(good);
  });

  it('3 clients racing runDue() over 8 rounds of 4 due schedules enqueue exactly one job per schedule and round', async () => {
    const { session, prefix } = ctx();
    const names = Array.from({ length: 4 }, () => freshName('s'));
    const queue = freshName('q');
    const { clients, close } = await session.openClients(3);
    try {
      for (const name of names) await session.taskrow.schedules().upsert(name, { queue, every: 60_000, payload: name });
      const firsts = await Promise.all(names.map(async (n) => (await probeSchedule(session.probe, prefix, n))!.nextUs!));
      for (let round = 0; round < 8; round += 1) {
        for (const name of names) await shiftNextAt(session.probe, prefix, name, -60);
        const made = await Promise.all(clients.map((c) => c.schedules().runDue()));
        expect(made.reduce((a, b) => a + b, 0)).toBe(names.length);
      }
      const jobs = await probeJobs(session.probe, prefix, queue);
      for (const name of names) expect(jobs.filter((j) => j.payload === name)).toHaveLength(8);
      expect(jobs).toHaveLength(names.length * 8);
      // Each round re-opened the tick before each schedule's first (the probe moved next_at back to it).
      const runAts = await probeRunAts(session.probe, prefix, queue);
      expect(runAts).toEqual(firsts.flatMap((f) => Array<number>(8).fill(f - 60e6)).sort((a, b) => a - b));
    } finally {
      for (const name of names) await session.taskrow.schedules().remove(name);
      await close();
    }
  });

  it('upserts racing the ticks of 2 schedulers neither lose a tick nor double it, and keep the next tick', async () => {
    const { session, prefix } = ctx();
    const [name, queue] = [freshName('s'), freshName('q')];
    const { clients, close } = await session.openClients(3);
    try {
      const first = (await clients[0]!.schedules().upsert(name, { queue, every: 60_000, payload: -1 })).nextAt!.getTime() * 1000;
      for (let round = 0; round < 8; round += 1) {
        await shiftNextAt(session.probe, prefix, name, -60);
        await Promise.all([
          clients[0]!.schedules().runDue(),
          clients[1]!.schedules().runDue(),
          clients[2]!.schedules().upsert(name, { queue, every: 60_000, payload: round }),
        ]);
        // A tick that lost its compare-and-set to the upsert is still due: a later pass takes it.
        await clients[0]!.schedules().runDue();
        expect((await probeSchedule(session.probe, prefix, name))!.nextUs).toBe(first);
        expect(await probeRunAts(session.probe, prefix, queue)).toHaveLength(round + 1);
      }
      expect((await probeSchedule(session.probe, prefix, name))!.payload).toBe(7);
    } finally {
      await session.taskrow.schedules().remove(name);
      await close();
    }
  });

  it('3 started schedulers over real 1-second ticks enqueue one job per tick, consecutive, none twice', async () => {
    const { session, prefix } = ctx();
    const [name, queue] = [freshName('s'), freshName('q')];
    const { clients, close } = await session.openClients(3);
    let schedulers: Scheduler[] = [];
    try {
      await session.taskrow.schedules().upsert(name, { queue, cron: '* * * * * *', missed: { each: 5 } });
      schedulers = clients.map((c) => c.schedules().start({ pollInterval: 500 }));
      await until('2 ticks enqueued', async () => (await probeRunAts(session.probe, prefix, queue)).length >= 2, 10);
      await Promise.all(schedulers.map((x) => x.stop()));
      const runAts = await probeRunAts(session.probe, prefix, queue);
      expect(runAts.length).toBeGreaterThanOrEqual(2);
      expect(runAts.every((r, i) => r % 1e6 === 0 && (i === 0 || r - runAts[i - 1]! === 1e6))).toBe(true);
      expect(schedulers.reduce((a, x) => a + x.enqueued, 0)).toBe(runAts.length);
      expect((await probeSchedule(session.probe, prefix, name))!.lastUs).toBe(runAts[runAts.length - 1]);
    } finally {
      await Promise.all(schedulers.map((x) => x.stop()));
      await session.taskrow.schedules().remove(name);
      await close();
    }
  });
}
