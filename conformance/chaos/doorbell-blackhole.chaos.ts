import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { label } from '../src/targets.js';
import { chaosTargets, openScene, report, waitFor, type Scene } from './lib.js';
import { startProxy, type Proxy } from './proxy.js';
import { effectsOf, effectsTable, readLedgers, startWorkerProcess, verdict } from './worker-runs.js';

// Scenario g: a doorbell worker process whose every connection (its kept connection, its sleeper,
// its handlers' own statements) goes through a proxy that, again and again, drops every byte both
// ways for 1-2.5 s without closing anything, while this process enqueues JOBS jobs on a direct
// connection (its rings reach the server; the woken sleeper's answer may not reach the worker).
// The worker polls only every POLL_MS milliseconds, so pickups within a second come from the doorbell.
// Must hold: every job's effect exactly once, by its latest claim, nothing left, no enqueue
// error; and once the network is back, the doorbell is too: jobs enqueued one by one are picked
// up within a second at the median (a sleeper or a kept connection stuck on a silent socket
// would leave them to the next poll); and `worker.stop()` then returns.
const JOBS = Number(process.env['TASKROW_CHAOS_BLACKHOLE_JOBS'] ?? 1000);
const POLL_MS = 5000;
const BATCH = 5;
const AFTER = 20;
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Blackholes the proxy for 1-2.5 s every 1-2.5 s while `running()`; resolves to the number of outages. */
async function outages(proxy: Proxy, running: () => boolean): Promise<number> {
  let n = 0;
  while (running()) {
    await pause(1000 + Math.random() * 1500);
    if (!running()) break;
    proxy.setMode('blackhole');
    n += 1;
    await pause(1000 + Math.random() * 1500);
    proxy.setMode('forward');
  }
  return n;
}

/** Asks a worker process to stop its worker; resolves to how long `stop()` took (ms), or null after `ms`. */
function stopWorker(child: ChildProcess, ms: number): Promise<number | null> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), ms);
    child.on('message', (m) => {
      if (m !== 'stopped') return;
      clearTimeout(timer);
      resolve(performance.now() - t0);
    });
    child.send('stop');
  });
}

/** The wall-clock start of each handler run, by sequence number (the `run` lines' last field). */
function startsOf(dir: string): Map<number, number> {
  const at = new Map<number, number>();
  for (const f of readdirSync(dir)) {
    for (const l of readFileSync(join(dir, f), 'utf8').split('\n')) {
      const [kind, seq, , , , wall] = l.split(' ');
      if (kind === 'run' && wall && !at.has(Number(seq))) at.set(Number(seq), Number(wall));
    }
  }
  return at;
}

for (const target of chaosTargets()) {
  describe(`${label(target)} · mysql2 · chaos: doorbell worker behind a blackholing network`, () => {
    let scene: Scene;
    let proxy: Proxy;
    let dir: string;
    const children = new Set<ChildProcess>();
    beforeAll(async () => {
      scene = await openScene(target.url, 4);
      proxy = await startProxy({ host: '127.0.0.1', port: Number(new URL(target.url).port) });
      dir = mkdtempSync(join(tmpdir(), 'taskrow-chaos-g-'));
    });
    afterAll(async () => {
      for (const c of children) c.kill('SIGKILL');
      await proxy?.close();
      await scene?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it(`${JOBS} jobs to a doorbell worker process whose network goes silent again and again: each done once, and the doorbell back once the network is`, async () => {
      const effects = await effectsTable(scene);
      const env = {
        CHAOS_URL: proxy.url(target.url),
        CHAOS_PREFIX: scene.prefix,
        CHAOS_EFFECTS: effects,
        CHAOS_QUEUE: 'g',
        CHAOS_DOORBELL: '1',
        CHAOS_POLL: String(POLL_MS),
        CHAOS_POOL: '4',
        CHAOS_TIMEOUT: '2000',
      };
      await startWorkerProcess({ ...env, CHAOS_LEDGER: join(dir, 'w0') }, children);
      await pause(1500); // the worker is idle, asleep on the doorbell
      const q = scene.tr.queue<{ seq: number }>('g');
      const enqueued = new Set<number>();
      const enqueueErrors: string[] = [];
      let producing = true;
      const faults = outages(proxy, () => producing);
      const t0 = performance.now();
      for (let seq = 0; seq < JOBS; seq += BATCH) {
        const seqs = Array.from({ length: Math.min(BATCH, JOBS - seq) }, (_, k) => seq + k);
        await q.enqueueMany(seqs.map((s) => ({ payload: { seq: s }, maxAttempts: 1000 }))).then(
          () => {
            for (const s of seqs) enqueued.add(s);
          },
          (err: unknown) => void enqueueErrors.push(String((err as Error).message ?? err)),
        );
        await pause(60); // about 12 s of enqueues: several outages
      }
      producing = false;
      const cuts = await faults;
      proxy.setMode('forward');
      const table = scene.table('queue_jobs');
      const left = async (): Promise<number> => Number((await scene.probe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))[0]?.n);
      await waitFor(async () => (await left()) === 0, 90_000, 'drained').catch(() => undefined);
      const drainedIn = (performance.now() - t0) / 1000;
      // The network is back: one job at a time, each rung.
      const enqueuedAt = new Map<number, number>();
      for (let seq = JOBS; seq < JOBS + AFTER; seq++) {
        await q.enqueue({ seq }, { maxAttempts: 1000 });
        enqueuedAt.set(seq, Date.now());
        enqueued.add(seq);
        await pause(300);
      }
      await waitFor(async () => (await left()) === 0, 3 * POLL_MS, 'drained after').catch(() => undefined);
      const stopTook = await stopWorker([...children][0]!, 15_000);
      for (const c of children) c.kill('SIGKILL');
      const effectOf = await effectsOf(scene, effects);
      const stranded = await left();
      const { lines, errors } = readLedgers(dir);
      const { lost, duplicated, doubles, stale, reruns } = verdict(enqueued, lines, effectOf);
      const starts = startsOf(dir);
      const waits = [...enqueuedAt].map(([seq, at]) => (starts.get(seq) ?? Infinity) - at).sort((a, b) => a - b);
      const median = waits[Math.floor(waits.length / 2)]!;
      report({
        scenario: `g doorbell worker behind a blackholing network (${cuts} outages of 1-2.5 s)`,
        server: `${target.engine} ${target.version}`,
        adapter: 'mysql2',
        jobs: JOBS + AFTER,
        kills: 0,
        restarts: 0,
        lost,
        duplicated,
        doubleCompletions: doubles,
        errors: enqueueErrors.length,
        note: `drained in ${drainedIn.toFixed(1)} s; ${proxy.counters.blackholedBytes} bytes blackholed; ${reruns} extra runs; ${errors.length} worker errors reported; after: pickup median ${median} ms, slowest ${waits.at(-1)} ms; stop() ${stopTook === null ? 'did not return' : `${Math.round(stopTook)} ms`}; stranded ${stranded}`,
      });
      expect(cuts, 'outages').toBeGreaterThan(0);
      expect(proxy.counters.blackholedBytes, 'bytes blackholed').toBeGreaterThan(0);
      expect(enqueueErrors, 'enqueue errors').toEqual([]);
      expect(enqueued.size).toBe(JOBS + AFTER);
      expect(stranded, 'jobs left').toBe(0);
      expect(lost, 'jobs with no effect').toBe(0);
      expect(duplicated, 'jobs under two ids').toBe(0);
      expect(doubles, 'jobs completed twice').toBe(0);
      expect(stale, 'completions by a claim that was not the latest').toBe(0);
      expect(
        errors.filter((e) => e.startsWith('INVALID_ARGUMENT')),
        'heartbeat refused',
      ).toEqual([]);
      expect(median, `pickup waits once the network is back (ms): ${waits.join(', ')}`).toBeLessThan(1000);
      expect(stopTook, 'worker.stop() returned (ms)').not.toBeNull();
    }, 240_000);
  });
}
