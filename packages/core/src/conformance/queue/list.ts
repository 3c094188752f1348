import { expect, it } from 'vitest';
import { cursorOf, pageQuery, type InfoRow } from '../../queue/admin/list.js';
import { PHASE, queueTables } from '../../queue/model/tables.js';
import type { JobInfo } from '../../queue/model/types.js';
import { freshName } from '../harness.js';
import { handlerReads } from '../reads.js';
import type { SuiteContext } from '../session.js';
import { probeJobs, probeTotal, setDueOffset, type ProbedJob } from './probe.js';
import { rejection } from '../expect.js';

/** Every page of `list()` until `next` is undefined. */
async function allPages<P>(
  list: (after: string | undefined) => Promise<{ jobs: JobInfo<P>[]; next: string | undefined }>,
): Promise<{ ids: number[]; sizes: number[] }> {
  const ids: number[] = [];
  const sizes: number[] = [];
  let after: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = await list(after);
    ids.push(...page.jobs.map((j) => j.id));
    sizes.push(page.jobs.length);
    if (page.next === undefined) return { ids, sizes };
    after = page.next;
  }
  throw new Error('list() kept handing out next cursors');
}

/** Claim order computed from the probe's rows: priority, due time, group, id. */
const claimOrder = (rows: readonly ProbedJob[]): number[] =>
  [...rows]
    .sort((a, b) => a.priority - b.priority || a.dueAtMs - b.dueAtMs || (a.group < b.group ? -1 : a.group > b.group ? 1 : 0) || a.id - b.id)
    .map((j) => j.id);

/** `list()` and `getJob()`: read-only views of a queue for operators and dashboards. */
export function queueList<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('lists jobs of every state in state order, with what the table holds', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name, { keepFinishedFor: 600_000 });
    await session.taskrow.queue(freshName('q')).enqueue('other queue');
    await q.enqueueMany([
      { payload: 'run', priority: -5 },
      { payload: 'done', priority: -4 },
      { payload: 'dead', priority: -3, maxAttempts: 1 },
      { payload: 'ready-low', priority: 7, group: 'g1' },
      { payload: 'ready-high', priority: 2 },
      { payload: 'later', delay: 300_000 },
    ]);
    const [run, done, dead] = await q.claim({ limit: 3, lease: 120_000 });
    await q.complete(done!);
    await q.fail(dead!, new Error('it broke'));
    const page = await q.list();
    expect(page.next).toBeUndefined();
    expect(page.jobs.map((j) => [j.payload, j.state])).toEqual([
      ['ready-high', 'ready'],
      ['ready-low', 'ready'],
      ['later', 'delayed'],
      ['run', 'running'],
      ['done', 'done'],
      ['dead', 'dead'],
    ]);
    const rows = new Map((await probeJobs(session.probe, prefix, name)).map((r) => [r.id, r]));
    for (const j of page.jobs) {
      const r = rows.get(j.id)!;
      expect(j.queue).toBe(name);
      expect([j.state, j.attempt, j.maxAttempts, j.priority, j.group ?? '', j.lastError]).toEqual([
        r.state,
        r.attempt,
        r.maxAttempts,
        r.priority,
        r.group,
        r.lastError,
      ]);
      expect(j.dueAt.getTime(), j.payload).toBe(Math.trunc(r.dueAtMs));
    }
    const byPayload = new Map(page.jobs.map((j) => [j.payload, j]));
    expect(byPayload.get('ready-low')!.group).toBe('g1');
    expect(byPayload.get('run')!.attempt).toBe(1);
    // the lease expiry: the claim's leaseUntil is a lower bound taken a moment before the server set it
    const leaseGap = byPayload.get('run')!.dueAt.getTime() - run!.leaseUntil.getTime();
    expect(leaseGap).toBeGreaterThanOrEqual(0);
    expect(leaseGap).toBeLessThan(5000);
    expect(byPayload.get('dead')!.lastError).toContain('it broke');
    expect(byPayload.get('done')!.finishedAt).toBeInstanceOf(Date);
    expect(byPayload.get('ready-high')!.finishedAt).toBeNull();
    const later = byPayload.get('later')!;
    expect((later.dueAt.getTime() - later.createdAt.getTime()) / 1000).toBeCloseTo(300, 0);
    expect(later.runAt.getTime()).toBe(later.dueAt.getTime());
  });

  it('pages through a queue in claim order, exactly once each, with no cursor after the last page', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name);
    // Two batches (two due times), three priorities and two groups: every tie-breaker is used.
    await q.enqueueMany(Array.from({ length: 11 }, (_, i) => ({ payload: i, priority: i % 3, ...(i % 2 ? { group: 'b' } : {}) })));
    await q.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ payload: 100 + i, priority: i % 3, ...(i % 4 === 0 ? { group: 'a' } : {}) })));
    const rows = await probeJobs(session.probe, prefix, name);
    const expected = claimOrder(rows);
    expect(expected).toHaveLength(21);
    const paged = await allPages((after) => q.list({ limit: 7, ...(after === undefined ? {} : { after }) }));
    expect(paged.sizes).toEqual([7, 7, 7]);
    expect(paged.ids).toEqual(expected);
    expect((await allPages((after) => q.list({ limit: 4, ...(after === undefined ? {} : { after }) }))).ids).toEqual(expected);
    // "claim order" is the order claim() takes them in
    const claimed = await q.claim({ limit: 21, lease: 60_000 });
    expect(claimed.map((j) => j.id)).toEqual(expected);
  });

  it('carries on across states and filters by state and group', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name, { maxAttempts: 1 });
    await q.enqueueMany(['r1', 'r2', 'r3'].map((payload) => ({ payload, group: 'g' })));
    await q.enqueueMany(['d1', 'd2'].map((payload) => ({ payload, delay: 600_000 })));
    await q.enqueueMany(['x1', 'x2'].map((payload) => ({ payload, priority: -1 })));
    for (const j of await q.claim({ limit: 2, lease: 60_000 })) await q.fail(j, 'no');
    const ids = new Map((await probeJobs(session.probe, prefix, name)).map((r) => [r.payload, r.id]));
    await setDueOffset(session.probe, prefix, ids.get('d2')!, 100);
    const all = await allPages((after) => q.list({ limit: 2, ...(after === undefined ? {} : { after }) }));
    expect(all.sizes).toEqual([2, 2, 2, 1]);
    const payloadOf = new Map([...ids].map(([p, id]) => [id, p]));
    expect(all.ids.map((id) => payloadOf.get(id))).toEqual(['r1', 'r2', 'r3', 'd2', 'd1', 'x1', 'x2']);
    const some = await q.list({ state: ['dead', 'delayed'] });
    expect(some.jobs.map((j) => j.payload)).toEqual(['d2', 'd1', 'x1', 'x2']);
    expect((await q.list({ state: 'dead', limit: 1 })).jobs.map((j) => j.payload)).toEqual(['x1']);
    expect((await q.list({ group: 'g', limit: 2 })).jobs.map((j) => j.payload)).toEqual(['r1', 'r2']);
    expect((await q.list({ group: 'other' })).jobs).toEqual([]);
    expect((await session.taskrow.queue(freshName('q')).list()).jobs).toEqual([]);
  });

  it('gets one job by id in any state, and null for another queue or a finished job', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<{ n: number }>(name);
    const [a, b] = await q.enqueueMany([{ payload: { n: 1 } }, { payload: { n: 2 }, delay: 60_000 }]);
    const got = await q.getJob(b!.id);
    expect(got).toMatchObject({ id: b!.id, queue: name, state: 'delayed', payload: { n: 2 }, attempt: 0 });
    const [job] = await q.claim({ limit: 1, lease: 60_000 });
    expect((await q.getJob(a!.id))!.state).toBe('running');
    expect(await session.taskrow.queue(freshName('q')).getJob(a!.id)).toBeNull();
    await q.complete(job!);
    expect(await q.getJob(a!.id)).toBeNull();
    expect((await probeJobs(session.probe, prefix, name)).map((r) => r.id)).toEqual([b!.id]);
  });

  it('reads only the page from the index, however many jobs the queue and other queues hold', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name, { keepFinishedFor: 3_600_000 });
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ payload: i, priority: i % 7 }));
    await session.taskrow.queue(freshName('q')).enqueueMany(many(6000));
    await q.enqueueMany(many(8000));
    for (let i = 0; i < 2; i++) await q.complete(await q.claim({ limit: 1000, lease: 60_000 }));
    const t = queueTables(prefix);
    const first = pageQuery(t, name, PHASE.ready, undefined, undefined, 51);
    const top = await handlerReads(session.probe, first.sql, first.params);
    expect(top.rows).toHaveLength(51);
    expect(top.reads).toBeLessThan(3 * 51);
    // a page deep into the backlog starts at its cursor, not at the start of the range
    const whole = pageQuery(t, name, PHASE.ready, undefined, undefined, 4051);
    const ordered = (await session.probe.query<InfoRow>(whole.sql, whole.params)) as InfoRow[];
    const next = pageQuery(t, name, PHASE.ready, undefined, cursorOf(ordered[3999]!), 51);
    const later = await handlerReads(session.probe, next.sql, next.params);
    expect(later.rows.map((r) => Number(r['id']))).toEqual(ordered.slice(4000).map((r) => Number(r.id)));
    expect(later.reads).toBeLessThan(3 * 51 + 20);
    const done = pageQuery(t, name, PHASE.done, undefined, undefined, 51);
    expect((await handlerReads(session.probe, done.sql, done.params)).reads).toBeLessThan(3 * 51);
  });

  it('rejects bad list() and getJob() arguments, naming them', async () => {
    const { session, prefix } = ctx();
    const q = session.taskrow.queue(freshName('q'));
    await q.enqueueMany([{ payload: 1 }, { payload: 2 }]);
    const before = await probeTotal(session.probe, prefix);
    const cases: [() => Promise<unknown>, string][] = [
      [() => q.list({ limit: 0 }), 'limit'],
      [() => q.list({ limit: 1001 }), '1000'],
      [() => q.list({ limit: 2.5 }), '2.5'],
      [() => q.list({ state: 'waiting' as never }), '"waiting"'],
      [() => q.list({ state: [] }), 'at least one state'],
      [() => q.list({ after: 'not-a-cursor' }), '"not-a-cursor"'],
      [() => q.list({ after: Buffer.from('[0,0,"2024-01-01 00:00:00.000000","",0]').toString('base64url') }), 'after'],
      [() => q.list('ready' as never), 'object'],
      [() => q.getJob(0), 'getJob() id'],
      [() => q.getJob('7' as never), '"7"'],
    ];
    for (const [call, says] of cases) {
      const err = await rejection(call, 'INVALID_ARGUMENT');
      expect(err.message).toContain(says);
    }
    expect((await rejection(() => q.list({ group: 'bad group' }), 'INVALID_NAME')).message).toContain('"bad group"');
    expect(await probeTotal(session.probe, prefix)).toBe(before);
  });
}
