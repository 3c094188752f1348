import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queue } from '@taskrow/core';
import { taskrow } from '@taskrow/mysql2';
import { label } from '../src/targets.js';
import { chaosOptions, chaosTargets, openScene, report, waitFor, type Scene } from './lib.js';
import { effectsOf, effectsTable, readLedgers, startWorkerProcess, verdict } from './worker-runs.js';

// Scenario f: the doorbell under killed connections. WORKERS worker processes sleep on the
// doorbell (`doorbell: true`, 2 s between polls) and run the application's own short statements on
// the same pool; this process, which has no worker of the queue (so it begins each ring alongside
// its enqueue), enqueues HANDED jobs one at a time into the idle queue (each ring of those hands
// its job to a sleeper that registered a token, schema version 24), then the rest in batches of 5
// through PRODUCERS clients of their own (whose rings run at the same time), while the probe KILLs a sleeping connection, then a connection of
// the run every 150 ms: every third kill a sleeping one (`SELECT SLEEP(1)`), the others at random
// (producers' enqueues and rings, claims, acks, the application's). Must hold: every job's effect
// exactly once and by its latest claim, nothing left, no enqueue error surfaced, and no
// application statement interrupted by a ring's `KILL QUERY` (a `KILL` MUST NOT reach a
// connection its sleeper gave back to the pool, whatever was killed meanwhile).
const JOBS = Number(process.env['TASKROW_CHAOS_DOORBELL_JOBS'] ?? 3000);
const WORKERS = 2;
const PRODUCERS = 3;
const EVERY_MS = 150;
const BATCH = 5;
/** The first jobs, enqueued one at a time 3 ms apart: the rings of these hand each to a sleeper. */
const HANDED = Math.min(300, JOBS);
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The run's connections other than the probe's, and those of them asleep on the doorbell. */
async function connections(scene: Scene): Promise<{ all: { id: number }[]; asleep: { id: number }[] }> {
  const all = await scene
    .probe<{ id: number; info: string | null }>(
      "SELECT id, info FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND user = 'taskrow' AND db = DATABASE()",
    )
    .catch(() => []);
  return { all, asleep: all.filter((r) => /^SELECT SLEEP\(1\)/.test(r.info ?? '')) };
}

/**
 * KILLs a sleeping connection first (waiting up to 5 s for one), then a connection of the run
 * every `EVERY_MS` while `running()`; resolves to the kills, of sleepers and in all.
 */
async function killConnections(scene: Scene, running: () => boolean): Promise<{ kills: number; sleepers: number }> {
  let kills = 0;
  let sleepers = 0;
  const t0 = performance.now();
  while (sleepers === 0 && performance.now() - t0 < 5000) {
    const victim = (await connections(scene)).asleep[0];
    if (
      victim &&
      (await scene.probe(`KILL ${Number(victim.id)}`).then(
        () => true,
        () => false,
      ))
    )
      kills = sleepers = 1;
    else await pause(20);
  }
  for (let n = 0; running(); n++) {
    await pause(EVERY_MS);
    const { all, asleep } = await connections(scene);
    const pick = n % 3 === 0 && asleep.length > 0 ? asleep : all;
    const victim = pick[Math.floor(Math.random() * pick.length)];
    if (!victim) continue;
    const done = await scene.probe(`KILL ${Number(victim.id)}`).then(
      () => true,
      () => false,
    );
    kills += done ? 1 : 0;
    sleepers += done && pick === asleep ? 1 : 0;
  }
  return { kills, sleepers };
}

for (const target of chaosTargets()) {
  describe(`${label(target)} · mysql2 · chaos: doorbell under KILL <connection> every ${EVERY_MS} ms`, () => {
    let scene: Scene;
    let dir: string;
    const children = new Set<ChildProcess>();
    const pools: mysql.Pool[] = [];
    beforeAll(async () => {
      scene = await openScene(target.url, 4);
      dir = mkdtempSync(join(tmpdir(), 'taskrow-chaos-f-'));
    });
    afterAll(async () => {
      for (const c of children) c.kill('SIGKILL');
      await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
      await scene?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it(`${JOBS} jobs from a producer process to ${WORKERS} doorbell worker processes: each done once, no enqueue error, no application statement interrupted`, async () => {
      const effects = await effectsTable(scene);
      const env = {
        CHAOS_URL: target.url,
        CHAOS_PREFIX: scene.prefix,
        CHAOS_EFFECTS: effects,
        CHAOS_QUEUE: 'f',
        CHAOS_DOORBELL: '1',
        CHAOS_POLL: '2000',
        CHAOS_APP: '2',
        CHAOS_POOL: '4',
      };
      await Promise.all(Array.from({ length: WORKERS }, (_, i) => startWorkerProcess({ ...env, CHAOS_LEDGER: join(dir, `w${i}`) }, children)));
      await pause(1500); // the workers are idle, asleep on the doorbell
      pools.push(...Array.from({ length: PRODUCERS - 1 }, () => mysql.createPool({ uri: target.url, connectionLimit: 4 })));
      for (const p of pools) p.on('connection', (c) => c.on('error', () => undefined));
      const queues: Queue<{ seq: number }>[] = [
        scene.tr.queue('f'),
        ...(await Promise.all(pools.map((p) => taskrow(p, chaosOptions(scene.prefix))))).map((tr) => tr.queue<{ seq: number }>('f')),
      ];
      const enqueued = new Set<number>();
      const enqueueErrors: string[] = [];
      let producing = true;
      const faults = killConnections(scene, () => producing);
      const t0 = performance.now();
      const produce = async (q: Queue<{ seq: number }>, from: number): Promise<void> => {
        for (let seq = from; seq < JOBS; seq += BATCH * PRODUCERS) {
          const seqs = Array.from({ length: Math.min(BATCH, JOBS - seq) }, (_, k) => seq + k);
          await q.enqueueMany(seqs.map((s) => ({ payload: { seq: s }, maxAttempts: 1000 }))).then(
            () => {
              for (const s of seqs) enqueued.add(s);
            },
            (err: unknown) => void enqueueErrors.push(String((err as Error).message ?? err)),
          );
          await pause(10);
        }
      };
      for (let seq = 0; seq < HANDED; seq++) {
        await queues[0]!.enqueue({ seq }, { maxAttempts: 1000 }).then(
          () => void enqueued.add(seq),
          (err: unknown) => void enqueueErrors.push(String((err as Error).message ?? err)),
        );
        await pause(3);
      }
      await Promise.all(queues.map((q, i) => produce(q, HANDED + i * BATCH)));
      await pause(200); // the last rings go out
      const table = scene.table('queue_jobs');
      const left = async (): Promise<number> => Number((await scene.probe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))[0]?.n);
      await waitFor(async () => (await left()) === 0, 60_000, 'drained').catch(() => undefined);
      producing = false;
      const { kills, sleepers } = await faults;
      const seconds = (performance.now() - t0) / 1000;
      await pause(200); // the application loops run on a moment with nothing killed
      for (const c of children) c.kill('SIGKILL');
      const effectOf = await effectsOf(scene, effects);
      const stranded = await left();
      const { lines, errors, strays, app } = readLedgers(dir);
      const { lost, duplicated, doubles, stale, reruns } = verdict(enqueued, lines, effectOf);
      report({
        scenario: `f doorbell, KILL every ${EVERY_MS} ms (a producer process, ${WORKERS} doorbell worker processes)`,
        server: `${target.engine} ${target.version}`,
        adapter: 'mysql2',
        jobs: JOBS,
        kills,
        restarts: 0,
        lost,
        duplicated,
        doubleCompletions: doubles,
        errors: enqueueErrors.length,
        note: `${seconds.toFixed(1)} s; ${sleepers} sleepers killed; ${app} application statements, ${strays.length} interrupted by a ring; ${reruns} extra runs; stranded ${stranded}`,
      });
      expect(kills).toBeGreaterThan(0);
      expect(sleepers, 'sleeping connections killed').toBeGreaterThan(0);
      expect(enqueueErrors, 'enqueue errors').toEqual([]);
      expect(enqueued.size).toBe(JOBS);
      expect(stranded, 'jobs left').toBe(0);
      expect(lost, 'jobs with no effect').toBe(0);
      expect(duplicated, 'jobs under two ids').toBe(0);
      expect(doubles, 'jobs completed twice').toBe(0);
      expect(stale, 'completions by a claim that was not the latest').toBe(0);
      expect(app, 'application statements that ran').toBeGreaterThan(100);
      expect(strays, 'application statements interrupted by a ring').toEqual([]);
      expect(
        errors.filter((e) => e.startsWith('INVALID_ARGUMENT')),
        'heartbeat refused',
      ).toEqual([]);
    }, 150_000);
  });
}
