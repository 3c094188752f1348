import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { label } from '../src/targets.js';
import { chaosTargets, openScene, report, waitFor, type Scene } from './lib.js';
import { effectsOf, effectsTable, readLedgers, startWorkerProcess, verdict } from './worker-runs.js';

// Scenario e (issue 12): WORKERS worker processes (queue.work(), 2 s leases) over JOBS jobs; every
// 150-600 ms one of them, at random, is either SIGKILLed (and replaced) or SIGSTOPped for 0.5-3 s
// (longer than its lease) and then continued. Each handler writes an effect row and completes its
// job in one transaction; each process keeps a ledger file outside the database. Afterwards: every
// job done, exactly one effect per job, no job under two ids, and every confirmed completion made
// by the job's latest claim (a stopped worker that wakes up never completes a job taken from it).
const JOBS = Number(process.env['TASKROW_CHAOS_WORKER_JOBS'] ?? 2000);
const WORKERS = 4;
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

for (const target of chaosTargets()) {
  describe(`${label(target)} · mysql2 · chaos: worker processes SIGKILLed and SIGSTOPped`, () => {
    let scene: Scene;
    let dir: string;
    const children = new Set<ChildProcess>();
    beforeAll(async () => {
      scene = await openScene(target.url, 4);
      dir = mkdtempSync(join(tmpdir(), 'taskrow-chaos-e-'));
    });
    afterAll(async () => {
      for (const c of children) c.kill('SIGCONT'), c.kill('SIGKILL');
      await scene?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it(`${JOBS} jobs, ${WORKERS} worker processes, 2 s leases: each job done once, by its latest claim`, async () => {
      const effects = await effectsTable(scene);
      const enqueued = new Map<number, number>();
      for (let i = 0; i < JOBS; i += 500) {
        const seqs = Array.from({ length: Math.min(500, JOBS - i) }, (_, k) => i + k);
        const res = await scene.tr.queue('e').enqueueMany(seqs.map((seq) => ({ payload: { seq }, maxAttempts: 1000 })));
        for (const [k, seq] of seqs.entries()) enqueued.set(seq, res[k]!.id);
      }
      const spawnWorker = (): Promise<ChildProcess> =>
        startWorkerProcess(
          { CHAOS_URL: target.url, CHAOS_PREFIX: scene.prefix, CHAOS_EFFECTS: effects, CHAOS_LEDGER: join(dir, `w${children.size}-${Date.now()}`) },
          children,
        );
      await Promise.all(Array.from({ length: WORKERS }, spawnWorker));
      let kills = 0;
      let stops = 0;
      const left = async (): Promise<number> => Number((await scene.probe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${scene.table('queue_jobs')}`))[0]?.n);
      const t0 = performance.now();
      while ((await left()) > 0 && performance.now() - t0 < 120_000) {
        await pause(150 + Math.random() * 450);
        const victim = [...children][Math.floor(Math.random() * children.size)];
        if (!victim || victim.exitCode !== null) continue;
        if (Math.random() < 0.5) {
          victim.kill('SIGCONT');
          if (victim.kill('SIGKILL')) kills += 1;
          await new Promise((r) => (victim.exitCode !== null || victim.signalCode !== null ? r(undefined) : victim.once('exit', r)));
          await spawnWorker();
        } else if (victim.kill('SIGSTOP')) {
          stops += 1;
          setTimeout(() => victim.kill('SIGCONT'), 500 + Math.random() * 2500);
        }
      }
      const seconds = (performance.now() - t0) / 1000;
      await waitFor(async () => (await left()) === 0, 1000, 'drained').catch(() => undefined);
      for (const c of children) c.kill('SIGCONT'), c.kill('SIGKILL');
      const effectOf = await effectsOf(scene, effects);
      const stranded = await left();
      const { lines, errors } = readLedgers(dir);
      const { lost, duplicated, doubles, stale, reruns } = verdict(new Set(enqueued.keys()), lines, effectOf);
      report({
        scenario: 'e worker processes SIGKILL / SIGSTOP (2 s leases)',
        server: `${target.engine} ${target.version}`,
        adapter: 'mysql2',
        jobs: JOBS,
        kills,
        restarts: 0,
        lost,
        duplicated,
        doubleCompletions: doubles,
        errors: errors.length,
        note: `${seconds.toFixed(1)} s; ${stops} SIGSTOPs; ${reruns} extra runs; completions by a stale claim ${stale}; stranded ${stranded}${errors[0] ? `; e.g. ${errors[0].slice(0, 160)}` : ''}`,
      });
      expect(kills + stops).toBeGreaterThan(0);
      expect(stranded, 'jobs left').toBe(0);
      expect(lost, 'jobs with no effect').toBe(0);
      expect(duplicated, 'jobs under two ids').toBe(0);
      expect(doubles, 'jobs completed twice').toBe(0);
      expect(stale, 'completions by a claim that was not the latest').toBe(0);
      expect(effectOf.size).toBe(JOBS);
      // Issue 12, item 2: a handler that acks its own job never makes the heartbeat refuse a batch.
      expect(
        errors.filter((e) => e.startsWith('INVALID_ARGUMENT')),
        'heartbeat refused',
      ).toEqual([]);
    }, 180_000);
  });
}
