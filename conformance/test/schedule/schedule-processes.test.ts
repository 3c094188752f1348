import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createTaskrow } from '@taskrow/core';
import { mysql2Client, type Mysql2Connection } from '@taskrow/mysql2';
import { counting } from '../../src/counting.js';
import { openMigratedPool, until } from '../../src/setup.js';
import { label, targets } from '../../src/targets.js';

const script = fileURLToPath(new URL('./scheduler-process.mjs', import.meta.url));
const PROCESSES = 3;
const TICKS = 60;

/** Starts one scheduler process and resolves once it is running. */
function spawnScheduler(url: string, prefix: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = fork(script, [], { env: { ...process.env, SCHED_URL: url, SCHED_PREFIX: prefix }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`scheduler process exited with ${code} before it was ready`)));
    child.once('message', () => resolve(child));
  });
}

/** Stops one scheduler process and resolves to what it reports. */
function stopScheduler(child: ChildProcess): Promise<{ enqueued: number; errors: string[] }> {
  return new Promise((resolve, reject) => {
    child.removeAllListeners('exit');
    child.once('message', (m) => resolve(m as { enqueued: number; errors: string[] }));
    child.once('exit', (code) => code !== 0 && reject(new Error(`scheduler process exited with ${code}`)));
    child.send('stop');
  });
}

// The servers run at once (each its own concurrent suite), so the file takes about one minute.
for (const target of targets()) {
  describe.concurrent(`${label(target)} · mysql2 · scheduler processes`, () => {
    it(
      `${PROCESSES} scheduler processes over ${TICKS} one-second ticks enqueue exactly one job per tick`,
      async () => {
        const prefix = `sp${process.pid.toString(36)}${target.engine.slice(0, 2)}${target.version.replace(/\D/g, '').slice(0, 4)}_`;
        const { tr, probe, end } = await openMigratedPool(target, { prefix, connectionLimit: 2 });
        const children: ChildProcess[] = [];
        try {
          children.push(...(await Promise.all(Array.from({ length: PROCESSES }, () => spawnScheduler(target.url, prefix)))));
          const first = (await tr.schedules().upsert('tick', { queue: 'ticks', every: 1000, missed: { each: 10 } })).nextAt!.getTime() * 1000;
          const runAts = async (): Promise<number[]> =>
            (
              await probe.query<{ r: unknown }>(
                `SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', run_at) AS r FROM \`${prefix}queue_jobs\` WHERE queue = 'ticks' ORDER BY run_at, id`,
              )
            ).map((x) => Number(x.r));
          await until(`${TICKS} ticks enqueued`, async () => (await runAts()).length >= TICKS, TICKS + 30);
          await tr.schedules().remove('tick');
          const reports = await Promise.all(children.splice(0).map(stopScheduler));
          const ticks = await runAts();
          // One job per tick: consecutive seconds from the first tick, none missing, none twice.
          expect(ticks.length).toBeGreaterThanOrEqual(TICKS);
          expect(ticks).toEqual(Array.from({ length: ticks.length }, (_, k) => first + k * 1e6));
          expect(reports.flatMap((r) => r.errors)).toEqual([]);
          expect(reports.reduce((a, r) => a + r.enqueued, 0)).toBe(ticks.length);
        } finally {
          for (const c of children) c.kill('SIGKILL');
          await end();
        }
      },
      (TICKS + 60) * 1000,
    );

    it('an idle scheduler sends one statement per pollInterval; a tick costs one transaction of 3 statements and 2 looks', async () => {
      const prefix = `si${process.pid.toString(36)}${target.engine.slice(0, 2)}${target.version.replace(/\D/g, '').slice(0, 4)}_`;
      const { pool, probe, end } = await openMigratedPool(target, { prefix, connectionLimit: 2 });
      try {
        const { client, statements } = counting(mysql2Client(pool));
        const tr = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
        await tr.schedules().upsert('hourly', { queue: 'h', every: 3_600_000 });
        const started = statements();
        const scheduler = tr.schedules().start({ pollInterval: 100 });
        try {
          // Its first look (sent at start) is behind the window: the window holds looks a pollInterval apart.
          await until("the scheduler's first look", () => statements() > started, 10);
          const before = statements();
          const t0 = performance.now();
          // The window ends at its 10th look (an event), and is measured rather than fixed.
          await until('10 looks of the idle scheduler', () => statements() - before >= 10, 10);
          const looks = statements() - before;
          // At most one look per pollInterval of the window, however long the window really was (a
          // loaded machine stretches timers); and it keeps looking: at least a third of that.
          const intervals = (performance.now() - t0) / 100;
          expect(looks).toBeLessThanOrEqual(Math.floor(intervals) + 1);
          expect(looks).toBeGreaterThanOrEqual(Math.floor(intervals / 3));
        } finally {
          await scheduler.stop();
        }
        await probe.query(`UPDATE \`${prefix}queue_schedules\` SET next_at = next_at - INTERVAL 3600 SECOND`);
        const before = statements();
        expect(await tr.schedules().runDue()).toBe(1);
        // A look, the tick (BEGIN, isolation, read, compare-and-set, insert, COMMIT), a look.
        expect(statements() - before).toBe(8);
      } finally {
        await end();
      }
    });
  });
}
