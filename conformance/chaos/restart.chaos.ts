import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePortBelowEphemeral, startServer, type ServerHandle } from '@taskrow/servers';
import { label } from '../src/targets.js';
import { runKohntopp, expectReconciled } from './kohntopp.js';
import { chaosTargets, openScene, report, type Scene } from './lib.js';

// Scenario a (issue 12): Köhntopp's scenario (2 producers, 10 consumers) against a server of its
// own, started with durable settings (innodb_flush_log_at_trx_commit=1, doublewrite) on a port
// below the ephemeral range, which is SIGKILLed and restarted on the same data directory twice
// mid-run (after a quarter and after 60% of the jobs were completed). Producers and consumers must
// recover by themselves (a retry budget that spans a restart); the ledger must balance.
const JOBS = Number(process.env['TASKROW_CHAOS_RESTART_JOBS'] ?? 3000);
/**
 * Retries that span a crash recovery (MySQL 9.7 with full durability took up to about 30 s on a
 * loaded 2-core machine): about 70 s of attempts, at most 1 s apart.
 */
const RETRY = { attempts: 100, maxDelayMs: 1000 };
/**
 * Lease of each claim, milliseconds: longer than a crash restart takes, so a consumer that held jobs
 * across the restart still holds them when its retried completion reaches the server (a restart
 * longer than the lease would rightly end in `LEASE_LOST`, an error surfaced to the caller). A claim
 * whose reply the crash lost leaves its jobs held this long before another consumer claims them.
 */
const LEASE_MS = 30_000;

for (const target of chaosTargets()) {
  describe(`${label(target)} · mysql2 · chaos: server SIGKILLed and restarted twice`, () => {
    let server: ServerHandle;
    let scene: Scene;
    beforeAll(async () => {
      const port = await freePortBelowEphemeral();
      server = await startServer({ engine: target.engine, version: label(target).split(' ')[1], sources: ['local'], durability: 'full', port });
      scene = await openScene(server.url, 16, 2000, { retry: RETRY });
    });
    afterAll(async () => {
      await scene?.close();
      await server?.stop();
    });

    it(`${JOBS} jobs through two crash restarts (durable settings): none lost, duplicated or completed twice`, async () => {
      let restarts = 0;
      const restartMs: number[] = [];
      const restartAt = [0.25, 0.6].map((f) => Math.floor(JOBS * f));
      const result = await runKohntopp({
        scene,
        tr: scene.tr,
        jobs: JOBS,
        lease: LEASE_MS,
        limitMs: 240_000,
        async fault(running, ledger) {
          for (const at of restartAt) {
            while (running() && ledger.completedCount < at) await new Promise((r) => setTimeout(r, 20));
            if (!running()) return;
            const t = performance.now();
            await server.restart!();
            restartMs.push(performance.now() - t);
            restarts += 1;
          }
        },
      });
      report({
        scenario: 'a server SIGKILL + restart x2 (Köhntopp 2x10, durable)',
        server: `${target.engine} ${target.version}`,
        adapter: 'mysql2',
        jobs: result.jobs,
        kills: restarts,
        restarts,
        lost: result.lost,
        duplicated: result.duplicated,
        doubleCompletions: result.doubleCompletions,
        errors: result.errors,
        note: `${result.seconds.toFixed(1)} s; restarts took ${restartMs.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', ')}; stranded ${result.stranded}${result.errorSamples.length ? `; e.g. ${result.errorSamples[0]}` : ''}`,
      });
      expect(restarts).toBe(2);
      expectReconciled(result, JOBS);
    }, 330_000);
  });
}
