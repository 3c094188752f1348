import { expect, it } from 'vitest';
import { expectNone } from '../expect.js';
import { LeaseLostError } from '../../queue/model/errors.js';
import type { Job } from '../../queue/model/types.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { aborted, extendedLease } from './holding.js';
import { probeJob, probeJobs, probeNowMs, until } from './probe.js';

/** A promise with its resolver, for handlers the test lets finish. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

/** queue.work(): batches, concurrency, retries, heartbeats, abort signals and graceful stop. */
export function queueWorker<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('runs every job once, at most `concurrency` at a time, and acks them', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name);
    await q.enqueueMany(Array.from({ length: 60 }, (_, i) => ({ payload: i })));
    const seen: number[] = [];
    let active = 0;
    let most = 0;
    const errors: unknown[] = [];
    const w = q.work(
      async (job) => {
        active += 1;
        most = Math.max(most, active);
        await new Promise((r) => setTimeout(r, 2));
        seen.push(job.payload);
        active -= 1;
      },
      { concurrency: 4, batchSize: 10, pollInterval: 50, onError: (e) => void errors.push(e) },
    );
    await until('60 jobs handled', () => seen.length >= 60);
    await w.stop();
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expectNone('errors reported to onError', errors);
    expect(most).toBeLessThanOrEqual(4);
    expect(most).toBeGreaterThan(1);
    expect(w.counts).toEqual({ completed: 60, failed: 0, lost: 0 });
    expect(await probeJobs(session.probe, prefix, name)).toEqual([]);
  });

  it('fails a throwing handler: retried after backoff, dead after maxAttempts with the error kept', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name, { backoff: { base: 1, max: 1 } });
    await q.enqueueMany([{ payload: 'flaky' }, { payload: 'broken', maxAttempts: 2 }, { payload: 'fine' }]);
    const runs: string[] = [];
    const w = q.work(
      (job: Job<string>) => {
        runs.push(`${job.payload}#${job.attempt}`);
        if (job.payload === 'broken' || (job.payload === 'flaky' && job.attempt === 1)) throw new Error(`${job.payload} failed`);
      },
      { concurrency: 2, pollInterval: 20 },
    );
    await until('all settled', async () => (await probeJobs(session.probe, prefix, name)).every((j) => j.state === 'dead'));
    await w.stop();
    expect(runs.sort()).toEqual(['broken#1', 'broken#2', 'fine#1', 'flaky#1', 'flaky#2']);
    expect(w.counts).toEqual({ completed: 2, failed: 3, lost: 0 });
    const [dead] = await probeJobs(session.probe, prefix, name);
    expect(dead).toMatchObject({ payload: 'broken', state: 'dead', attempt: 2 });
    expect(dead!.lastError).toContain('broken failed');
  });

  it('extends the lease of a long job while it runs, so no one else takes it', async () => {
    const { session, prefix, target } = ctx();
    const lease = extendedLease(target);
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const { id } = await q.enqueue('long');
    const g = gate();
    const attempts: number[] = [];
    const errors: unknown[] = [];
    const w = q.work(
      async (job) => {
        attempts.push(job.attempt);
        await g.wait;
      },
      { lease, pollInterval: 50, onError: (e) => void errors.push(e) },
    );
    await until('job claimed', () => attempts.length === 1);
    const first = (await probeJob(session.probe, prefix, id))!.dueAtMs;
    // Past the end of the first lease on the database clock, the job is still leased: only an extension keeps it.
    const stillLeased = async (): Promise<boolean> => {
      const now = await probeNowMs(session.probe);
      return now > first && (await probeJob(session.probe, prefix, id))!.dueAtMs > now;
    };
    const seen = (): string => `worker errors: ${errors.map(String).join(' | ') || 'none'}; counts ${JSON.stringify(w.counts)}; attempts ${attempts.join(',')}`;
    await until('the first lease passed with the job still leased', stillLeased, 10 + (3 * lease) / 1000).catch((e: Error) => {
      throw new Error(`${e.message}; ${seen()}`);
    });
    expect(await q.claim({ limit: 1, lease: 60_000 })).toEqual([]);
    g.open();
    await until('job completed', async () => (await probeJob(session.probe, prefix, id)) === undefined);
    await w.stop();
    expect(attempts, seen()).toEqual([1]);
    expect(w.counts).toEqual({ completed: 1, failed: 0, lost: 0 });
  });

  it('a handler that reads its signal only after the lease was lost finds it aborted, with the lease-lost reason', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const { id } = await q.enqueue('x');
    const g = gate();
    let started = false;
    let late: AbortSignal | undefined;
    const w = q.work(
      async (_job, context) => {
        started = true;
        await g.wait;
        late = context.signal;
      },
      { lease: 1000, pollInterval: 50 },
    );
    await until('job started', () => started);
    await session.probe.query(`UPDATE \`${prefix}queue_jobs\` SET token = token + 1 WHERE id = ?`, [id]);
    await until('lease lost', () => w.counts.lost === 1);
    g.open();
    await until('signal read', () => late !== undefined);
    expect(late!.aborted).toBe(true);
    expect(late!.reason).toBeInstanceOf(LeaseLostError);
    await w.stop();
  });

  it('fires the signal when the lease is lost, and does not ack the job', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const { id } = await q.enqueue('x');
    let reason: unknown;
    let started = false;
    const w = q.work(
      async (_job, { signal }) => {
        started = true;
        reason = await aborted(signal);
      },
      { lease: 1000, pollInterval: 50 },
    );
    await until('job started', () => started);
    // Another claim took the job: its fencing token moved on.
    await session.probe.query(`UPDATE \`${prefix}queue_jobs\` SET token = token + 1 WHERE id = ?`, [id]);
    await until('signal fired', () => reason !== undefined);
    expect(reason).toBeInstanceOf(LeaseLostError);
    await w.stop();
    expect(w.counts).toEqual({ completed: 0, failed: 0, lost: 1 });
    expect((await probeJob(session.probe, prefix, id))!.state).toBe('running');
  });

  it('stop() gives back unstarted jobs, waits for running ones up to the timeout, then aborts and releases them', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<number>(name);
    await q.enqueueMany([0, 1, 2, 3, 4].map((payload) => ({ payload })));
    const reasons: unknown[] = [];
    const running = new Set<number>();
    const w = q.work(
      async (job, { signal }) => {
        if (job.payload === 0) return;
        running.add(job.payload);
        reasons.push(await aborted(signal));
      },
      { concurrency: 2, batchSize: 5, pollInterval: 50 },
    );
    await until('two blocked handlers', () => running.size === 2);
    const res = await w.stop({ timeout: 200 });
    expect(res.released).toBe(4);
    expect(reasons.length).toBe(2);
    expect(reasons.every((r) => r instanceof DOMException && r.name === 'AbortError')).toBe(true);
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.map((j) => [j.payload, j.state, j.attempt])).toEqual([1, 2, 3, 4].map((p) => [p, 'ready', 0]));
    expect(w.counts.completed).toBe(1);
    expect(await w.stop()).toEqual(res);
  });

  it('lets a running job finish within the stop timeout and acks it', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    await q.enqueue('x');
    const g = gate();
    let started = false;
    const w = q.work(
      async () => {
        started = true;
        await g.wait;
      },
      { pollInterval: 50 },
    );
    await until('started', () => started);
    const stopping = w.stop({ timeout: 30_000 });
    g.open();
    expect(await stopping).toEqual({ released: 0 });
    expect(w.counts.completed).toBe(1);
    expect(await probeJobs(session.probe, prefix, name)).toEqual([]);
  });

  it('picks up jobs enqueued while it idles, and claims only its group', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const done: string[] = [];
    const w = q.work((job: Job<string>) => void done.push(job.payload), { pollInterval: 100, group: 'mine' });
    let idle = false;
    w.on('idle', () => void (idle = true));
    await until('the worker found nothing', () => idle);
    await q.enqueueMany([{ payload: 'a', group: 'mine' }, { payload: 'b' }, { payload: 'c', group: 'mine' }]);
    await until('group jobs handled', () => done.length === 2);
    await w.stop();
    expect(done.sort()).toEqual(['a', 'c']);
    expect((await probeJobs(session.probe, prefix, name)).map((j) => [j.payload, j.state])).toEqual([['b', 'ready']]);
  });

  it('leaves a job alone that the handler acked itself', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    await q.enqueueMany([{ payload: 1 }, { payload: 2 }]);
    const w = q.work(
      async (job) => {
        if (job.payload === 1) await q.release(job, { delay: 600_000 });
      },
      { pollInterval: 50 },
    );
    await until('one completed', () => w.counts.completed === 1);
    await w.stop();
    expect(w.counts).toEqual({ completed: 1, failed: 0, lost: 0 });
    expect((await probeJobs(session.probe, prefix, name)).map((j) => [j.payload, j.state])).toEqual([[1, 'delayed']]);
  });
}
