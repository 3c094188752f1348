import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Job, Taskrow } from '@taskrow/core';
import { chaosAdapters, type Opened } from './adapters.js';
import { label } from '../src/targets.js';
import { answersWithin, chaosOptions, chaosTargets, openScene, report, waitFor, type Scene } from './lib.js';
import { startProxy, type Proxy } from './proxy.js';

// Scenario c (issue 12): a proxy between one holder and the server starts dropping every byte both
// ways without closing anything (a dead switch, a frozen VM). The holder (a Queue worker's handler,
// a Resources job with autoRefresh) MUST see its signal abort with LEASE_LOST before its lease
// passes, judged against the lease end the probe reads from the database on its own connection;
// a second holder on a direct connection then gets the lease, and never while the first is live.
const LEASE_MS = 3000;
/** How long after the lease end a holder is still waited for (it has failed by then). */
const GRACE_MS = 4000;

/** The local `performance.now()` at which a database time `expr` passes (the probe's round trip halved). */
async function localTimeOf(scene: Scene, expr: string, params: unknown[]): Promise<number | null> {
  const t0 = performance.now();
  const [row] = await scene.probe<{ us: number | null }>(`SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), ${expr}) AS us`, params);
  const t1 = performance.now();
  return row?.us === null || row?.us === undefined ? null : (t0 + t1) / 2 + Number(row.us) / 1000;
}

/** Waits for `signal` until `deadline` (local ms); resolves to when it aborted, or null. */
async function abortTime(signal: AbortSignal, aborts: { at: number | null }, deadline: number): Promise<number | null> {
  await waitFor(() => signal.aborted || performance.now() > deadline, deadline - performance.now() + 1000, 'abort wait').catch(() => undefined);
  return signal.aborted ? aborts.at : null;
}

for (const target of chaosTargets())
  for (const adapter of chaosAdapters()) {
    describe(`${label(target)} · ${adapter.name} · chaos: blackholed holder`, () => {
      let scene: Scene;
      let proxy: Proxy;
      let opened: Opened;
      let tr: Taskrow;
      beforeEach(async () => {
        scene = await openScene(target.url);
        proxy = await startProxy({ host: '127.0.0.1', port: Number(new URL(target.url).port) });
        opened = await adapter.open(proxy.url(target.url), 4, chaosOptions(scene.prefix));
        tr = opened.tr;
      });
      afterEach(async () => {
        await proxy.close();
        await opened.end();
        await scene.close();
      });

      const summary = (what: string, diff: number | null, errors: number, note: string): void =>
        report({
          scenario: `c blackhole · ${what}`,
          server: `${target.engine} ${target.version}`,
          adapter: adapter.name,
          jobs: 1,
          kills: 0,
          restarts: 0,
          lost: 0,
          duplicated: 0,
          doubleCompletions: 0,
          errors,
          leaseEndToAbortMs: diff,
          note,
        });

      it(`Queue worker (lease ${LEASE_MS / 1000} s): the handler's signal aborts before the lease passes; a second worker gets the job after`, async () => {
        const { id } = await scene.tr.queue('bh').enqueue({ n: 1 });
        const aborts = { at: null as number | null };
        let job: Job | undefined;
        let sig: AbortSignal | undefined;
        let errors = 0;
        const worker = tr.queue('bh').work(
          async (j, { signal }) => {
            job = j;
            sig = signal;
            signal.addEventListener('abort', () => (aborts.at = performance.now()), { once: true });
            await new Promise<void>((resolve) => {
              signal.addEventListener('abort', () => resolve(), { once: true });
              setTimeout(resolve, 30_000).unref();
            });
          },
          { lease: LEASE_MS, concurrency: 1, pollInterval: 50, onError: () => (errors += 1) },
        );
        await waitFor(() => job !== undefined, 10_000, 'the worker claims the job');
        await new Promise((r) => setTimeout(r, 1000)); // one heartbeat may pass first
        proxy.setMode('blackhole');
        const leaseEnd = async (): Promise<number | null> =>
          localTimeOf(scene, `(SELECT due_at FROM ${scene.table('queue_jobs')} WHERE id = ? AND phase = 2)`, [id]);
        const firstEnd = await leaseEnd();
        expect(firstEnd, 'the job is leased').not.toBeNull();
        const secondP = claimAfter(scene, id, firstEnd! + GRACE_MS + 5000);
        const abortedAt = await abortTime(sig!, aborts, firstEnd! + GRACE_MS);
        // An extend sent just before the blackhole may have moved the lease on: the later end counts.
        const end = Math.max(firstEnd!, (await leaseEnd()) ?? firstEnd!);
        const second = await secondP;
        const diff = abortedAt === null ? null : abortedAt - end;
        const reason = signalReason(sig?.aborted ? sig : undefined);
        summary(
          'Queue worker',
          diff,
          errors,
          `second holder ${second === null ? 'never' : `${(second - end).toFixed(0)} ms after the lease end`}; reason ${reason}`,
        );
        void answersWithin(worker.stop({ timeout: 0 }), 1);
        expect(abortedAt, 'the handler signal aborted').not.toBeNull();
        expect(diff!, 'abort time minus lease end (ms)').toBeLessThan(0);
        expect(reason).toBe('LEASE_LOST');
        expect(second, 'a second worker claimed the job').not.toBeNull();
        expect(second!).toBeGreaterThan(abortedAt!);
      });

      it(`Resources job (lease ${LEASE_MS / 1000} s, autoRefresh): job.signal aborts and held turns false before the lease passes; a second job gets the lock after`, async () => {
        const key = `chaos.c.${scene.prefix}`;
        const job = tr.resources({ history: false, releaseOnExit: false }).job('holder', { outputs: [key], lease: LEASE_MS, autoRefresh: true });
        await job.acquire();
        const aborts = { at: null as number | null };
        const signal = job.signal;
        signal.addEventListener('abort', () => (aborts.at = performance.now()), { once: true });
        let heldAtAbort: boolean | undefined;
        signal.addEventListener('abort', () => (heldAtAbort = job.held), { once: true });
        await new Promise((r) => setTimeout(r, 1000)); // one refresh may pass first
        proxy.setMode('blackhole');
        const holder = job.id!;
        const leaseEnd = async (): Promise<number | null> =>
          localTimeOf(scene, `(SELECT MAX(lease_until) FROM ${scene.table('resource_locks')} WHERE holder = UNHEX(?))`, [holder]);
        const firstEnd = await leaseEnd();
        expect(firstEnd, 'the lock is held').not.toBeNull();
        const other = scene.tr.resources({ history: false, releaseOnExit: false }).job('second', { outputs: [key], lease: 30_000, wait: LEASE_MS + 15_000 });
        const secondP = other.acquire().then(
          () => performance.now(),
          () => null,
        );
        const abortedAt = await abortTime(signal, aborts, firstEnd! + GRACE_MS);
        const end = Math.max(firstEnd!, (await leaseEnd()) ?? firstEnd!);
        const second = await secondP;
        const heldAfter = job.held;
        const diff = abortedAt === null ? null : abortedAt - end;
        const reason = signalReason(signal.aborted ? signal : undefined);
        summary(
          'Resources job',
          diff,
          0,
          `held ${heldAfter} after the lease end; second holder ${second === null ? 'never' : `${(second - end).toFixed(0)} ms after the lease end`}; reason ${reason}`,
        );
        if (other.held) await other.release();
        expect(abortedAt, 'job.signal aborted').not.toBeNull();
        expect(diff!, 'abort time minus lease end (ms)').toBeLessThan(0);
        expect(reason).toBe('LEASE_LOST');
        expect(heldAtAbort).toBe(false);
        expect(heldAfter).toBe(false);
        expect(second, 'a second job acquired the key').not.toBeNull();
        expect(second!).toBeGreaterThan(abortedAt!);
      });
    });
  }

/** The `code` of the abort reason, or what it is instead. */
function signalReason(signal: AbortSignal | undefined): string {
  if (!signal) return 'none';
  const r = signal.reason as { code?: unknown } | undefined;
  return typeof r?.code === 'string' ? r.code : String(r);
}

/** Claims job `id` on the direct connection until it comes back (every 100 ms); when, or null. */
async function claimAfter(scene: Scene, id: number, deadline: number): Promise<number | null> {
  const q = scene.tr.queue('bh');
  while (performance.now() < deadline) {
    const jobs = await q.claim({ limit: 1, lease: 30_000 });
    if (jobs.some((j) => j.id === id)) {
      const at = performance.now();
      await q.complete(jobs);
      return at;
    }
    if (jobs.length) await q.release(jobs);
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}
