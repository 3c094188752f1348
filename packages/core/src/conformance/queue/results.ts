import { expect, it } from 'vitest';
import type { TaskrowError } from '../../errors.js';
import { rejection } from '../expect.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { makeDue, probeJob } from './probe.js';
import { refusesOption } from './strict.js';

/** Job results, progress and waiting for an outcome. */
export function queueResults<Tx>(ctx: () => SuiteContext<Tx>): void {
  it("stores a handler's return value with the kept job: getJob, list and waitFor show it", async () => {
    const { session, prefix } = ctx();
    const q = session.taskrow.queue<{ a: number; b: number }>(freshName('q'), { keepFinishedFor: 600_000 });
    const [x, y] = await q.enqueueMany([{ payload: { a: 1, b: 2 } }, { payload: { a: 5, b: 5 } }]);
    const outcome = q.waitFor(x!.id, { timeout: 30_000 });
    const w = q.work(async (job) => ({ sum: job.payload.a + job.payload.b, at: [job.id] }), { pollInterval: 50 });
    try {
      expect(await outcome).toEqual({ state: 'done', result: { sum: 3, at: [x!.id] } });
      expect(await q.waitFor(y!.id, { timeout: 30_000 })).toEqual({ state: 'done', result: { sum: 10, at: [y!.id] } });
    } finally {
      await w.stop();
    }
    const stored = await session.probe.query<{ result: string }>(`SELECT result FROM \`${prefix}queue_jobs\` WHERE id = ?`, [x!.id]);
    expect(stored.map((r) => JSON.parse(String(r.result)) as unknown)).toEqual([{ sum: 3, at: [x!.id] }]);
    expect((await q.getJob(y!.id))?.result).toEqual({ sum: 10, at: [y!.id] });
    expect((await q.list({ state: 'done' })).jobs.map((j) => j.result)).toEqual([
      { sum: 3, at: [x!.id] },
      { sum: 10, at: [y!.id] },
    ]);
  });

  it('complete(job, { result }) stores it when jobs are kept; a deleted job keeps nothing and waitFor says gone', async () => {
    const { session } = ctx();
    const kept = session.taskrow.queue(freshName('q'), { keepFinishedFor: 600_000 });
    const deleted = session.taskrow.queue(freshName('q'));
    const { id: k } = await kept.enqueue('k');
    const { id: d } = await deleted.enqueue('d');
    await kept.complete(await kept.claim({ limit: 1, lease: 60_000 }), { result: 'ok' });
    await deleted.complete(await deleted.claim({ limit: 1, lease: 60_000 }), { result: 'lost' });
    expect(await kept.waitFor(k)).toEqual({ state: 'done', result: 'ok' });
    expect(await deleted.getJob(d)).toBeNull();
    expect(await deleted.waitFor(d)).toEqual({ state: 'gone' });
  });

  it('a result that would not round-trip is refused by complete() before any SQL; from a handler it is reported and the job still completes', async () => {
    const { session, prefix } = ctx();
    const q = session.taskrow.queue(freshName('q'), { keepFinishedFor: 600_000 });
    const [a, b] = await q.enqueueMany([{ payload: 'a' }, { payload: 'b' }]);
    const [ja] = await q.claim({ limit: 1, lease: 60_000 });
    expect((await rejection(q.complete(ja!, { result: Number.NaN }), 'INVALID_ARGUMENT')).message).toContain('complete() result');
    expect(await probeJob(session.probe, prefix, a!.id)).toMatchObject({ state: 'running' });
    await refusesOption(() => q.complete(ja!, { reslt: 1 } as never), 'reslt', ['result']);
    await q.complete(ja!);
    const errors: unknown[] = [];
    const w = q.work(() => new Map([[1, 2]]), { pollInterval: 50, onError: (e) => void errors.push(e) });
    try {
      expect(await q.waitFor(b!.id, { timeout: 30_000 })).toEqual({ state: 'done', result: null });
    } finally {
      await w.stop();
    }
    expect(errors).toHaveLength(1);
    expect((errors[0] as TaskrowError).code).toBe('INVALID_ARGUMENT');
    expect((errors[0] as TaskrowError).message).toContain(`job ${b!.id}`);
  });

  it('progress() is stored, readable, refused for a value that would not round-trip, and fenced: LEASE_LOST once another claim took the job', async () => {
    const { session, prefix } = ctx();
    const q = session.taskrow.queue(freshName('q'));
    const { id } = await q.enqueue('p');
    const [job] = await q.claim({ limit: 1, lease: 60_000 });
    await q.progress(job!, { pct: 10 });
    await q.progress(job!, { pct: 50, step: 'copy' });
    expect((await q.getJob(id))?.progress).toEqual({ pct: 50, step: 'copy' });
    expect((await rejection(q.progress(job!, { pct: Infinity }), 'INVALID_ARGUMENT')).message).toContain('progress()');
    expect((await q.getJob(id))?.progress).toEqual({ pct: 50, step: 'copy' });
    await makeDue(session.probe, prefix, [id]); // the lease passed
    const [again] = await q.claim({ limit: 1, lease: 60_000 });
    expect(again!.id).toBe(id);
    const lost = await rejection(q.progress(job!, { pct: 90 }), 'LEASE_LOST');
    expect(lost.message).toContain(String(id));
    expect((await q.getJob(id))?.progress).toEqual({ pct: 50, step: 'copy' });
    await q.progress(again!, { pct: 0 });
    expect((await q.getJob(id))?.progress).toEqual({ pct: 0 });
    // The same through the job object, fenced alike.
    await again!.progress({ pct: 5 });
    expect((await q.getJob(id))?.progress).toEqual({ pct: 5 });
    await rejection(job!.progress({ pct: 95 }), 'LEASE_LOST');
    expect((await q.getJob(id))?.progress).toEqual({ pct: 5 });
    expect(Object.keys(again!)).not.toContain('progress');
  });

  it("a worker's handler reports progress through its context", async () => {
    const { session } = ctx();
    const q = session.taskrow.queue(freshName('q'), { keepFinishedFor: 600_000 });
    const { id } = await q.enqueue('p');
    const w = q.work(
      async (_job, { progress }) => {
        await progress({ pct: 100 });
        return 'fine';
      },
      { pollInterval: 50 },
    );
    try {
      expect(await q.waitFor(id, { timeout: 30_000 })).toEqual({ state: 'done', result: 'fine' });
    } finally {
      await w.stop();
    }
    expect((await q.getJob(id))?.progress).toEqual({ pct: 100 });
  });

  it('waitFor reports a dead job with its error, rejects with TIMEOUT after its timeout and with the reason of an aborted signal', async () => {
    const { session } = ctx();
    const q = session.taskrow.queue(freshName('q'), { maxAttempts: 1 });
    const [a, b] = await q.enqueueMany([{ payload: 'a' }, { payload: 'b' }]);
    const [ja] = await q.claim({ limit: 1, lease: 60_000 });
    await q.fail(ja!, new Error('broken'));
    expect(await q.waitFor(a!.id)).toEqual({ state: 'dead', error: expect.stringContaining('broken') });
    const t0 = performance.now();
    const timeout = await rejection(q.waitFor(b!.id, { timeout: 300 }), 'TIMEOUT');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(300);
    expect(timeout.message).toContain(String(b!.id));
    const controller = new AbortController();
    const waiting = q.waitFor(b!.id, { signal: controller.signal }).then(
      () => 'resolved',
      (e: unknown) => e,
    );
    controller.abort(new Error('no longer needed'));
    expect(((await waiting) as Error).message).toBe('no longer needed');
    await refusesOption(() => q.waitFor(b!.id, { timout: 1 } as never), 'timout', ['timeout', 'signal']);
    await rejection(q.waitFor(0), 'INVALID_ARGUMENT');
    expect((await q.getJob(b!.id))?.state).toBe('ready'); // waiting changed nothing
  });
}
