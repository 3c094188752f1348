import { expect, it } from 'vitest';
import { dotted, dottedName } from '../../resources/names.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeEdges, setEdgeTime } from './probe.js';

/** Letters only: sanitizing leaves them alone, so tests can predict the recorded names. */
function word(prefix: string): string {
  return `${prefix}${freshName('').replace(/[0-9-]/g, (d) => 'abcdefghijk'[Number(d)] ?? 'x')}`;
}

async function runJob<Tx>(
  ctx: SuiteContext<Tx>,
  r: ReturnType<SuiteContext<Tx>['session']['taskrow']['resources']>,
  name: string,
  inputs: string[],
  outputs: string[],
): Promise<void> {
  await r.produce(inputs);
  await (await r.acquire(name, { inputs, outputs })).release();
}

/** Flow history: sanitized edges, the `test.` rule, time windows and traversal. */
export function resourcesHistory<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('records input -> job and job -> output with digit-and-dash runs replaced by *', async () => {
    const c = ctx();
    const r = c.session.taskrow.resources();
    const flow = word('flow');
    // Under noUncheckedIndexedAccess each segment types as possibly undefined, hence the `!`.
    const day = dotted[flow]!.events!.byPartner!['2024-01-01']!;
    expect(String(day)).toBe(`${flow}.events.byPartner.2024-01-01`);
    // A run starts at a digit: the dash before 17 stays, as in jobs.py.
    const report = dottedName(flow, 'report', '2024-01-01', 'partner-17');
    expect(report).toBe(`${flow}.report.2024-01-01.partner-17`);
    await runJob(c, r, `${flow}.aggregate.v2`, [String(day)], [report]);
    expect(await r.exists(day)).toEqual([String(day)]);
    expect((await probeEdges(c.session.probe, c.prefix)).filter((e) => e.includes(flow))).toEqual([
      `input ${flow}.events.byPartner.* -> ${flow}.aggregate.v*`,
      `output ${flow}.aggregate.v* -> ${flow}.report.*.partner-*`,
    ]);
    const seen = (await r.edges()).filter((e) => e.from.startsWith(flow));
    expect(seen.map((e) => `${e.kind} ${e.from} -> ${e.to}`)).toEqual([
      `input ${flow}.events.byPartner.* -> ${flow}.aggregate.v*`,
      `output ${flow}.aggregate.v* -> ${flow}.report.*.partner-*`,
    ]);
    expect(seen.every((e) => e.lastSeen instanceof Date && Math.abs(e.lastSeen.getTime() - Date.now()) < 10 * 60_000)).toBe(true);
  });

  it('collapses day-parameterised runs into one edge and skips edges whose keys all start with test.', async () => {
    const c = ctx();
    const r = c.session.taskrow.resources();
    const flow = word('daily');
    for (const d of ['2024-01-01', '2024-01-02', '2024-01-03']) {
      await runJob(c, c.session.taskrow.resources(), `${flow}.job`, [`${flow}.in.${d}`], [`${flow}.out.${d}`]);
    }
    await runJob(c, r, `${flow}.testjob`, [`test.${flow}.a`], [`test.${flow}.b`]);
    await runJob(c, r, `${flow}.mixed`, [`test.${flow}.c`], [`${flow}.real`]);
    expect((await probeEdges(c.session.probe, c.prefix)).filter((e) => e.includes(flow))).toEqual([
      `input ${flow}.in.* -> ${flow}.job`,
      `input test.${flow}.c -> ${flow}.mixed`,
      `output ${flow}.job -> ${flow}.out.*`,
      `output ${flow}.mixed -> ${flow}.real`,
    ]);
  });

  it('records nothing with history off', async () => {
    const c = ctx();
    const r = c.session.taskrow.resources({ history: false });
    const flow = word('quiet');
    await runJob(c, r, `${flow}.job`, [`${flow}.in`], [`${flow}.out`]);
    expect((await probeEdges(c.session.probe, c.prefix)).filter((e) => e.includes(flow))).toEqual([]);
  });

  it('queries edges in a time window and updates the last-seen time', async () => {
    const c = ctx();
    const flow = word('window');
    await runJob(c, c.session.taskrow.resources(), `${flow}.old`, [`${flow}.a`], [`${flow}.b`]);
    await runJob(c, c.session.taskrow.resources(), `${flow}.new`, [`${flow}.b`], [`${flow}.c`]);
    await setEdgeTime(c.session.probe, c.prefix, `${flow}.a`, '2020-01-01 00:00:00');
    await setEdgeTime(c.session.probe, c.prefix, `${flow}.old`, '2020-01-01 00:00:00');
    const r = c.session.taskrow.resources();
    const mine = async (w: Parameters<typeof r.edges>[0]): Promise<string[]> =>
      (await r.edges(w)).filter((e) => e.from.startsWith(flow)).map((e) => `${e.from} -> ${e.to}`);
    expect(await mine({ before: new Date('2021-01-01T00:00:00Z') })).toEqual([`${flow}.a -> ${flow}.old`, `${flow}.old -> ${flow}.b`]);
    expect(await mine({ after: new Date('2021-01-01T00:00:00Z') })).toEqual([`${flow}.b -> ${flow}.new`, `${flow}.new -> ${flow}.c`]);
    expect(await mine({ after: new Date('2019-12-31T00:00:00Z'), before: new Date('2020-01-01T00:00:00Z') })).toEqual([]);
    expect(
      (await r.edges({ after: new Date('2020-01-01T00:00:00Z'), before: new Date('2020-01-01T00:00:01Z') })).map((e) => e.lastSeen.toISOString()),
    ).toContain('2020-01-01T00:00:00.000Z');
    // Running the old job again moves its edges' last-seen time to now.
    await runJob(c, c.session.taskrow.resources(), `${flow}.old`, [`${flow}.a`], [`${flow}.b`]);
    expect(await mine({ before: new Date('2021-01-01T00:00:00Z') })).toEqual([]);
  });

  it('traverses downstream and upstream, with a depth limit', async () => {
    const c = ctx();
    const r = c.session.taskrow.resources();
    const f = word('graph');
    // raw -> ingest -> clean -> report -> summary ; clean -> audit -> log
    await runJob(c, r, `${f}.ingest`, [`${f}.raw`], [`${f}.clean`]);
    await runJob(c, r, `${f}.report`, [`${f}.clean`], [`${f}.summary`]);
    await runJob(c, r, `${f}.audit`, [`${f}.clean`], [`${f}.log`]);
    const down = await r.downstream(`${f}.raw`);
    expect(down.map((e) => `${e.depth} ${e.from} -> ${e.to}`)).toEqual([
      `1 ${f}.raw -> ${f}.ingest`,
      `2 ${f}.ingest -> ${f}.clean`,
      `3 ${f}.clean -> ${f}.audit`,
      `3 ${f}.clean -> ${f}.report`,
      `4 ${f}.audit -> ${f}.log`,
      `4 ${f}.report -> ${f}.summary`,
    ]);
    expect((await r.downstream(`${f}.raw`, { depth: 2 })).length).toBe(2);
    const up = await r.upstream(`${f}.summary`);
    expect(up.map((e) => `${e.depth} ${e.from} -> ${e.to}`)).toEqual([
      `1 ${f}.report -> ${f}.summary`,
      `2 ${f}.clean -> ${f}.report`,
      `3 ${f}.ingest -> ${f}.clean`,
      `4 ${f}.raw -> ${f}.ingest`,
    ]);
    // A start name is sanitized like the recorded ones.
    expect((await r.upstream(`${f}.report`, { depth: 1 })).map((e) => e.from)).toEqual([`${f}.clean`]);
    expect(await r.downstream(`${f}.nothing`)).toEqual([]);
  });
}
