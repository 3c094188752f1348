import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import { expect, it } from 'vitest';
import { UnrecoverableError } from '../../queue/model/errors.js';
import type { Job } from '../../queue/model/types.js';
import { CHANNELS } from '../../queue/model/events.js';
import { rejection } from '../expect.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { until } from './probe.js';
import { refusesOption } from './strict.js';

/** A worker's events, logger and diagnostics channels. */
export function queueEvents<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('emits claimed, completed, failed with retrying or dead, and idle, each with its job and outcome', async () => {
    const { session } = ctx();
    const q = session.taskrow.queue<string>(freshName('q'), { maxAttempts: 3, backoff: { base: 600_000, max: 600_000 } });
    const [ok, flaky, hopeless] = await q.enqueueMany([{ payload: 'ok' }, { payload: 'flaky' }, { payload: 'hopeless' }]);
    const seen: string[] = [];
    const claimed: number[] = [];
    const w = q.work(
      async (job) => {
        if (job.payload === 'flaky') throw new Error('try later');
        if (job.payload === 'hopeless') throw new UnrecoverableError('never');
        return { fine: true };
      },
      { concurrency: 3, batchSize: 3, pollInterval: 50 },
    );
    w.on('claimed', (jobs) => claimed.push(...jobs.map((j) => j.id)));
    w.on('completed', (job, result) => seen.push(`completed ${job.id} ${JSON.stringify(result)}`));
    w.on('failed', (job, err, outcome) => seen.push(`failed ${job.id} ${(err as Error).message} ${outcome.state}`));
    w.on('retrying', (job, _err, runAt) => seen.push(`retrying ${job.id} ${runAt instanceof Date}`));
    w.on('dead', (job) => seen.push(`dead ${job.id}`));
    let idle = 0;
    w.on('idle', () => void (idle += 1));
    try {
      await until('three outcomes and idle', () => seen.length === 5 && idle > 0);
    } finally {
      await w.stop();
    }
    expect([...claimed].sort((a, b) => a - b)).toEqual([ok!.id, flaky!.id, hopeless!.id]);
    expect([...seen].sort()).toEqual(
      [
        `completed ${ok!.id} {"fine":true}`,
        `dead ${hopeless!.id}`,
        `failed ${flaky!.id} try later delayed`,
        `failed ${hopeless!.id} never dead`,
        `retrying ${flaky!.id} true`,
      ].sort(),
    );
    expect(seen.indexOf(`failed ${hopeless!.id} never dead`)).toBeLessThan(seen.indexOf(`dead ${hopeless!.id}`));
    expect(idle).toBe(1); // once, however many empty claims followed
  });

  it('emits leaseLost when another claim took the job, and logs through a pino-style logger', async () => {
    const { session, prefix } = ctx();
    const q = session.taskrow.queue(freshName('q'));
    const { id } = await q.enqueue('x');
    const logs: { level: string; obj: Record<string, unknown>; msg?: string }[] = [];
    const logger = Object.fromEntries(
      ['debug', 'info', 'warn', 'error'].map((level) => [level, (obj: Record<string, unknown>, msg?: string) => void logs.push({ level, obj, msg })]),
    );
    const lost: Job[] = [];
    let started = false;
    const w = q.work(
      async (_job, { signal }) => {
        started = true;
        await new Promise((r) => signal.addEventListener('abort', r, { once: true }));
      },
      { lease: 1000, pollInterval: 50, logger },
    );
    w.on('leaseLost', (job) => void lost.push(job));
    try {
      await until('the handler started', () => started);
      // Another claim took the job: its fencing token changed.
      await session.probe.query(`UPDATE \`${prefix}queue_jobs\` SET token = token + 1 WHERE id = ?`, [id]);
      await until('leaseLost', () => lost.length === 1);
    } finally {
      await w.stop();
    }
    expect(lost.map((j) => j.id)).toEqual([id]);
    expect(logs.some((l) => l.level === 'debug' && l.msg === 'claimed jobs' && l.obj['jobs'] === 1 && l.obj['queue'] === q.name)).toBe(true);
    expect(logs.filter((l) => l.level === 'warn' && l.msg === 'lease lost').map((l) => l.obj['jobId'])).toEqual([id]);
    expect(w.counts.lost).toBe(1);
  });

  it('traces every handler run on the taskrow:queue:job channel, errors included, and publishes claims and completion batches', async () => {
    const { session } = ctx();
    const q = session.taskrow.queue<string>(freshName('q'), { maxAttempts: 1 });
    const [a, b] = await q.enqueueMany([{ payload: 'a' }, { payload: 'b' }]);
    const events: string[] = [];
    const mine = (c: unknown): c is { queue: string; job: Job; error?: unknown } => (c as { queue?: string }).queue === q.name;
    const handlers = {
      start: (c: unknown) => void (mine(c) && events.push(`start ${c.job.id}`)),
      asyncEnd: (c: unknown) => void (mine(c) && events.push(`end ${c.job.id}`)),
      error: (c: unknown) => void (mine(c) && events.push(`error ${c.job.id} ${(c.error as Error).message}`)),
      end: () => undefined,
      asyncStart: () => undefined,
    };
    let claims = 0;
    const onClaim = (m: unknown): void => void ((m as { queue: string }).queue === q.name && (claims += (m as { jobs: number }).jobs));
    const acks: { jobs: number; ms: number }[] = [];
    const onAck = (m: unknown): void => void ((m as { queue: string }).queue === q.name && acks.push(m as { jobs: number; ms: number }));
    const channel = tracingChannel(CHANNELS.job);
    channel.subscribe(handlers);
    subscribe(CHANNELS.claim, onClaim);
    subscribe(CHANNELS.ack, onAck);
    const w = q.work(
      async (job) => {
        if (job.payload === 'b') throw new Error('bad b');
      },
      { concurrency: 2, batchSize: 2, pollInterval: 50 },
    );
    try {
      await until('both traced', () => events.filter((e) => e.startsWith('end')).length === 2);
    } finally {
      await w.stop();
      channel.unsubscribe(handlers);
      unsubscribe(CHANNELS.claim, onClaim);
      unsubscribe(CHANNELS.ack, onAck);
    }
    expect(events.filter((e) => e.startsWith('start')).sort()).toEqual([`start ${a!.id}`, `start ${b!.id}`].sort());
    expect(events.filter((e) => e.startsWith('error'))).toEqual([`error ${b!.id} bad b`]);
    expect(claims).toBe(2);
    // Only the completion of a is a completion batch (b failed); its time is a real duration.
    expect(acks.map((a) => a.jobs)).toEqual([1]);
    expect(acks[0]!.ms).toBeGreaterThan(0);
  });

  it('refuses a misspelt worker option and a logger that is not one, before anything starts', async () => {
    const { session } = ctx();
    const q = session.taskrow.queue(freshName('q'));
    await refusesOption(() => q.work(() => undefined, { loger: {} } as never), 'loger', ['logger', 'onError']);
    expect((await rejection(() => q.work(() => undefined, { logger: 'console' } as never), 'INVALID_ARGUMENT')).message).toContain('"console"');
    expect((await rejection(() => q.work(() => undefined, { logger: { warn: 1 } } as never), 'INVALID_ARGUMENT')).message).toContain(
      'logger.warn must be a function, got 1',
    );
  });
}
