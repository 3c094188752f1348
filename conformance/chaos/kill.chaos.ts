import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { label } from '../src/targets.js';
import { runKohntopp, expectReconciled } from './kohntopp.js';
import { chaosTargets, openScene, report, type Scene } from './lib.js';

// Scenario b (issue 12): Köhntopp's scenario (2 producers, 10 consumers claiming and completing)
// while the probe kills one of the server's other connections at random every 200 ms
// (`KILL <connection id>`). Every enqueue must be accounted for, none lost, none duplicated, none
// completed twice, and no call may surface an error: taskrow retries lost connections itself.
const JOBS = Number(process.env['TASKROW_CHAOS_JOBS'] ?? 5000);
const EVERY_MS = 200;

for (const target of chaosTargets()) {
  describe(`${label(target)} · mysql2 · chaos: KILL <connection> every ${EVERY_MS} ms`, () => {
    let scene: Scene;
    beforeAll(async () => {
      scene = await openScene(target.url, 16);
    });
    afterAll(async () => {
      await scene?.close();
    });

    it(`${JOBS} jobs, 2 producers, 10 consumers: none lost, duplicated or completed twice; no error surfaced`, async () => {
      let kills = 0;
      const result = await runKohntopp({
        scene,
        tr: scene.tr,
        jobs: JOBS,
        lease: 10_000,
        limitMs: 90_000,
        async fault(running) {
          while (running()) {
            await new Promise((r) => setTimeout(r, EVERY_MS));
            const ids = await scene.probe<{ id: number }>(
              "SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND user = 'taskrow' AND db = DATABASE()",
            );
            const victim = ids[Math.floor(Math.random() * ids.length)];
            if (victim)
              await scene.probe(`KILL ${Number(victim.id)}`).then(
                () => (kills += 1),
                () => undefined,
              );
          }
        },
      });
      report({
        scenario: `b KILL every ${EVERY_MS} ms (Köhntopp 2x10)`,
        server: `${target.engine} ${target.version}`,
        adapter: 'mysql2',
        jobs: result.jobs,
        kills,
        restarts: 0,
        lost: result.lost,
        duplicated: result.duplicated,
        doubleCompletions: result.doubleCompletions,
        errors: result.errors,
        note: `${result.seconds.toFixed(1)} s; stranded ${result.stranded}${result.errorSamples.length ? `; e.g. ${result.errorSamples[0]}` : ''}`,
      });
      expect(kills).toBeGreaterThan(0);
      expectReconciled(result, JOBS);
    }, 150_000);
  });
}
