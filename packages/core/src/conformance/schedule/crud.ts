import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import { rejection } from '../expect.js';
import type { SuiteContext } from '../session.js';
import { probeSchedule, probeSchedules } from './probe.js';

const HOUR_US = 3600e6;

/** upsert, get, list and remove: every write checked through the probe. */
export function scheduleCrud<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('upsert() creates a schedule whose first tick comes from the database clock; get, list and remove see it', async () => {
    const { session, prefix } = ctx();
    const s = session.taskrow.schedules();
    const [name, queue] = [freshName('s'), freshName('q')];
    const info = await s.upsert(name, { queue, every: 60_000, payload: { report: 'daily' }, options: { priority: 3, group: 'g1' } });
    const row = (await probeSchedule(session.probe, prefix, name))!;
    expect(row).toMatchObject({
      queue,
      every: 60, // the table keeps whole seconds
      cron: null,
      payload: { report: 'daily' },
      options: { priority: 3, group: 'g1' },
      missed: 'once',
      lastUs: null,
    });
    // An interval is anchored at the whole second of its creation: the first tick is within 60 s.
    expect(row.nextUs! % 1e6).toBe(0);
    expect(row.nextUs! - row.nowUs).toBeGreaterThan(58e6);
    expect(row.nextUs! - row.nowUs).toBeLessThanOrEqual(60e6);
    expect(info).toMatchObject({ name, queue, every: 60_000, cron: null, tz: null, payload: { report: 'daily' }, missed: 'once', lastAt: null });
    expect(info.nextAt!.getTime()).toBe(row.nextUs! / 1000);
    expect(await s.get(name)).toEqual(info);
    expect((await s.list()).filter((x) => x.name === name)).toEqual([info]);
    expect(await s.remove(name)).toBe(true);
    expect(await probeSchedule(session.probe, prefix, name)).toBeUndefined();
    expect(await s.get(name)).toBeNull();
    expect(await s.remove(name)).toBe(false);
  });

  it('an update that keeps the timing keeps the next tick; one that changes it moves it; cron patterns follow their time zone', async () => {
    const { session, prefix } = ctx();
    const s = session.taskrow.schedules();
    const name = freshName('s');
    await s.upsert(name, { queue: 'a', every: 60_000 });
    const first = (await probeSchedule(session.probe, prefix, name))!;
    await s.upsert(name, { queue: 'b', every: 60_000, payload: [1], missed: { each: 4 } });
    const kept = (await probeSchedule(session.probe, prefix, name))!;
    expect(kept).toMatchObject({ queue: 'b', payload: [1], missed: 'each', nextUs: first.nextUs });
    expect((await s.get(name))!.missed).toEqual({ each: 4 });
    const info = await s.upsert(name, { queue: 'b', cron: '0 0 * * * *', tz: 'Asia/Kolkata' });
    const moved = (await probeSchedule(session.probe, prefix, name))!;
    // Hourly at minute 0 in UTC+05:30 is minute 30 in UTC, within the next hour.
    expect(moved.nextUs! % HOUR_US).toBe(HOUR_US / 2);
    expect(moved.nextUs! - moved.nowUs).toBeGreaterThan(0);
    expect(moved.nextUs! - moved.nowUs).toBeLessThanOrEqual(HOUR_US);
    expect(info).toMatchObject({ cron: '0 0 * * * *', tz: 'Asia/Kolkata', every: null, missed: 'once' });
    await s.upsert(name, { queue: 'b', cron: '0 0 * * * *' }); // same pattern, UTC now: a new timing
    expect((await probeSchedule(session.probe, prefix, name))!.nextUs! % HOUR_US).toBe(0);
    expect(await s.remove(name)).toBe(true);
  });

  it('upsert and remove inside the application transaction commit or roll back with it; schedulers refuse to run inside it', async () => {
    const { session, prefix } = ctx();
    const [name, kept] = [freshName('s'), freshName('s')];
    await session.withDriverTransaction('rollback', (tx) => session.taskrow.in(tx).schedules().upsert(name, { queue: 'q', every: 5000 }));
    expect(await probeSchedule(session.probe, prefix, name)).toBeUndefined();
    await session.withDriverTransaction('commit', async (tx) => {
      await session.taskrow.in(tx).schedules().upsert(kept, { queue: 'q', every: 5000 });
      expect(await probeSchedule(session.probe, prefix, kept)).toBeUndefined(); // not before the commit
    });
    expect(await probeSchedule(session.probe, prefix, kept)).toBeDefined();
    await session.withDriverTransaction('rollback', async (tx) => expect(await session.taskrow.in(tx).schedules().remove(kept)).toBe(true));
    expect(await probeSchedule(session.probe, prefix, kept)).toBeDefined();
    await session.withDriverTransaction('commit', async (tx) => {
      const inside = session.taskrow.in(tx).schedules();
      expect((await rejection(() => inside.start(), 'INVALID_ARGUMENT')).message).toContain('outside in(tx)');
      expect((await rejection(() => inside.runDue(), 'INVALID_ARGUMENT')).message).toContain('outside in(tx)');
    });
    expect(await session.taskrow.schedules().remove(kept)).toBe(true);
  });

  it('refuses bad input before any SQL, naming the value and what is accepted; nothing changes', async () => {
    const { session, prefix } = ctx();
    const s = session.taskrow.schedules();
    const name = freshName('s');
    await s.upsert(name, { queue: 'q', every: 60_000 });
    const before = await probeSchedules(session.probe, prefix);
    const bad: [unknown, unknown, string, string][] = [
      [
        name,
        { queue: 'q', every: 60_000, every_ms: 5 },
        'INVALID_ARGUMENT',
        'no option "every_ms"; its options are queue, cron, tz, every, payload, options, missed',
      ],
      [name, { queue: 'q' }, 'INVALID_ARGUMENT', 'exactly one of cron and every, got neither'],
      [name, { queue: 'q', every: 1000, cron: '* * * * *' }, 'INVALID_ARGUMENT', 'exactly one of cron and every, got cron "* * * * *" and every 1000'],
      [name, { queue: 'q', cron: '61 * * * *' }, 'INVALID_ARGUMENT', '"61 * * * *" is not a cron pattern'],
      [name, { queue: 'q', cron: '* * * * * * *' }, 'INVALID_ARGUMENT', 'is not a cron pattern of 5 or 6 fields'],
      [name, { queue: 'q', cron: '0 0 30 2 *' }, 'INVALID_ARGUMENT', '"0 0 30 2 *" has no tick after now'],
      [name, { queue: 'q', cron: '* * * * *', tz: 'Mars/Base' }, 'INVALID_ARGUMENT', 'IANA time zone name such as "Europe/Berlin" or "UTC", got "Mars/Base"'],
      [name, { queue: 'q', every: 5000, tz: 'UTC' }, 'INVALID_ARGUMENT', 'tz applies to cron patterns only'],
      [
        name,
        { queue: 'q', every: 0 },
        'INVALID_ARGUMENT',
        'every must be whole seconds in milliseconds (a multiple of 1000) from 1,000 to 315,360,000,000, got 0 (a number)',
      ],
      [name, { queue: 'q', every: 1500 }, 'INVALID_ARGUMENT', 'got 1500 (a number)'],
      [name, { queue: 'q', every: 1.5 }, 'INVALID_ARGUMENT', 'got 1.5 (a number)'],
      [
        name,
        { queue: 'q', every: 5000, missed: 'sometimes' },
        'INVALID_ARGUMENT',
        'missed must be "skip", "once" or { each: N } (N from 1 to 1000), got "sometimes"',
      ],
      [name, { queue: 'q', every: 5000, missed: { each: 1001 } }, 'INVALID_ARGUMENT', 'missed.each must be an integer from 1 to 1000, got 1001'],
      [name, { queue: 'q', every: 5000, missed: { each: 2, max: 3 } }, 'INVALID_ARGUMENT', 'no option "max"; its options are each'],
      [
        name,
        { queue: 'q', every: 5000, options: { runAt: new Date() } },
        'INVALID_ARGUMENT',
        'no option "runAt"; its options are delay, priority, maxAttempts, dedupKey, group, concurrencyKey',
      ],
      [name, { queue: 'q', every: 5000, options: { priority: 40000 } }, 'INVALID_ARGUMENT', 'priority must be an integer from -32768 to 32767, got 40000'],
      [name, { queue: 'q', every: 5000, payload: () => 1 }, 'INVALID_ARGUMENT', 'payload'],
      [name, { queue: 'bad queue', every: 5000 }, 'INVALID_NAME', 'invalid queue name "bad queue"'],
      ['-bad', { queue: 'q', every: 5000 }, 'INVALID_NAME', 'invalid schedule name "-bad"'],
      [name, null, 'INVALID_ARGUMENT', 'needs { queue, cron | every, ... }, got null'],
    ];
    for (const [n, spec, code, text] of bad) {
      const err = await rejection(() => s.upsert(n as string, spec as never), code as 'INVALID_ARGUMENT');
      expect(err.message, JSON.stringify(spec)).toContain(text);
    }
    expect((await rejection(() => s.start({ pollInterval: 0 }), 'INVALID_ARGUMENT')).message).toContain(
      'pollInterval must be a finite number of milliseconds from 10 to 3,600,000, got 0',
    );
    expect((await rejection(() => s.start({ poll: 1000 } as never), 'INVALID_ARGUMENT')).message).toContain('its options are pollInterval, onError');
    await rejection(() => s.get('no such name'), 'INVALID_NAME');
    await rejection(() => s.remove(''), 'INVALID_NAME');
    expect(await probeSchedules(session.probe, prefix)).toEqual(before.map((r) => ({ ...r, nowUs: expect.any(Number) })));
    expect(await s.remove(name)).toBe(true);
  });
}
