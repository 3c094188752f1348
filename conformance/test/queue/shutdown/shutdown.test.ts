import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskrowError, type Taskrow } from '@taskrow/core';
import { dropPrefix } from '@taskrow/core/conformance';
import { taskrow, type Mysql2Connection } from '@taskrow/mysql2';
import { mysql2Probe } from '../../../src/harnesses/mysql2.js';
import { until } from '../../../src/setup.js';
import { label, targets } from '../../../src/targets.js';

// Shutdown in one call: tr.close() stops the workers and schedulers the instance started; a worker
// or scheduler whose pool the application ended under it stops with one error, never a loop; and
// the SIGTERM recipe of docs/queue.md ends its process by itself, no job lost or run twice.

const PROGRAM = new URL('./sigterm-worker.mjs', import.meta.url).pathname;

/** A job's state, read on the side channel (`gone` once a completed job was deleted). */
async function stateOf(probe: Awaited<ReturnType<typeof mysql2Probe>>, prefix: string, id: number): Promise<string> {
  const rows = await probe.query(`SELECT phase, attempt FROM \`${prefix}queue_jobs\` WHERE id = ?`, [id]);
  const row = rows[0] as { phase: number; attempt: number } | undefined;
  return row === undefined ? 'gone' : `phase ${row.phase}`;
}

for (const target of targets()) {
  describe(`${label(target)} · mysql2 · shutdown`, () => {
    const prefix = `sd${process.pid.toString(36)}_`;
    let probe: Awaited<ReturnType<typeof mysql2Probe>>;
    const pools: mysql.Pool[] = [];

    /** A taskrow instance over a pool of its own. */
    const open = async (): Promise<{ pool: mysql.Pool; tr: Taskrow<Mysql2Connection> }> => {
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 4 });
      pools.push(pool);
      return { pool, tr: await taskrow(pool, { prefix }) };
    };

    beforeAll(async () => {
      probe = await mysql2Probe(target.url);
      const { tr } = await open();
      await tr.migrate();
    });
    afterAll(async () => {
      await dropPrefix(probe, prefix);
      await probe.end();
      await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
    });

    it('close() lets running handlers finish, gives unstarted jobs back and stops the scheduler, then the pool can end', async () => {
      const { pool, tr } = await open();
      const q = tr.queue<number>(`finish${Date.now()}`);
      const ids = (await q.enqueueMany([1, 2, 3, 4, 5, 6].map((payload) => ({ payload })))).map((e) => e.id);
      const started: number[] = [];
      let letGo = (): void => undefined;
      const gate = new Promise<void>((r) => (letGo = r));
      const worker = q.work(
        async (job) => {
          started.push(job.id);
          await gate;
        },
        { concurrency: 2, batchSize: 6 },
      );
      const scheduler = tr.schedules().start({ pollInterval: 50 });
      await until('two handlers running', () => started.length === 2);
      const closing = tr.close({ timeout: 30_000 });
      letGo(); // the two running handlers finish while close() waits for them
      await closing;
      expect(started).toHaveLength(2);
      for (const id of started) expect(await stateOf(probe, prefix, id)).toBe('gone');
      for (const id of ids.filter((i) => !started.includes(i))) expect(await stateOf(probe, prefix, id)).toBe('phase 0');
      await expect(worker.stop()).resolves.toEqual({ released: 4 }); // already stopped by close()
      await scheduler.stop();
      await pool.end(); // nothing of taskrow's is left on the pool
    });

    it('close() aborts handlers still running after its timeout and gives their jobs back', async () => {
      const { tr } = await open();
      const q = tr.queue<number>(`abort${Date.now()}`);
      const { id } = await q.enqueue(1);
      const signals: AbortSignal[] = [];
      q.work(
        async (_job, { signal }) => {
          signals.push(signal);
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
        },
        { concurrency: 1 },
      );
      await until('the handler running', () => signals.length === 1);
      await tr.close({ timeout: 200 });
      expect(signals[0]!.aborted).toBe(true);
      expect(await stateOf(probe, prefix, id)).toBe('phase 0');
    });

    it('a worker and a scheduler whose pool was ended under them stop with one error each and a rejected stop()', async () => {
      const { pool, tr } = await open();
      const errors: unknown[] = [];
      const worker = tr.queue(`ended${Date.now()}`).work(async () => undefined, { pollInterval: 50 });
      worker.on('error', (err) => errors.push(err));
      await once(worker, 'idle');
      const schedulerErrors: unknown[] = [];
      const scheduler = tr.schedules().start({ pollInterval: 50, onError: (err) => schedulerErrors.push(err) });
      await pool.end();
      await until('the worker and the scheduler told of the ended pool', () => errors.length > 0 && schedulerErrors.length > 0);
      await expect(worker.stop()).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
      await expect(scheduler.stop()).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
      // Absence cannot be awaited: ten poll intervals more, and still one error each.
      await new Promise((r) => setTimeout(r, 500));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(TaskrowError);
      expect(schedulerErrors).toHaveLength(1);
      await tr.close(); // resolves: what is left is already stopped
    });

    it('the SIGTERM recipe: the process ends by itself, and every job runs exactly once across two processes', async () => {
      const database = `sd_${process.pid}_${Date.now().toString(36)}`;
      await probe.query(`CREATE DATABASE \`${database}\``);
      const url = new URL(target.url);
      url.pathname = `/${database}`;
      const dir = mkdtempSync(join(tmpdir(), 'taskrow-sigterm-'));
      const ledger = join(dir, 'ledger');
      const pool = mysql.createPool({ uri: url.toString(), connectionLimit: 2 });
      try {
        const tr = await taskrow(pool);
        await tr.migrate();
        const jobs = 300;
        const enqueued = await tr.queue<number>('emails').enqueueMany(Array.from({ length: jobs }, (_, i) => ({ payload: i })));
        const lines = (): string[] => readFileSync(ledger, { encoding: 'utf8', flag: 'a+' }).split('\n').filter(Boolean);
        /** Runs the recipe until `ready()`, then sends SIGTERM and resolves to its exit code and how long it took to exit. */
        const runUntil = async (ready: () => boolean | Promise<boolean>): Promise<{ code: number | null; exitMs: number }> => {
          const child = spawn(process.execPath, [PROGRAM], { env: { ...process.env, DATABASE_URL: url.toString(), LEDGER: ledger }, stdio: 'inherit' });
          const exited = once(child, 'exit');
          await until('the recipe working', ready);
          const sent = performance.now();
          child.kill('SIGTERM');
          const [code] = (await exited) as [number | null];
          return { code, exitMs: performance.now() - sent };
        };
        const first = await runUntil(() => lines().length >= 50);
        expect(first.code).toBe(0);
        expect(lines().length).toBeLessThan(jobs); // stopped part way
        const second = await runUntil(async () => (await tr.queue('emails').stats()).counts.ready === 0 && lines().length >= jobs);
        expect(second.code).toBe(0);
        expect(Math.max(first.exitMs, second.exitMs)).toBeLessThan(15_000);
        const ran = lines().map((l) => Number(l.split(' ')[0]));
        expect(ran).toHaveLength(jobs); // none run twice...
        expect(new Set(ran)).toEqual(new Set(enqueued.map((e) => e.id))); // ...and none lost
        await tr.close();
      } finally {
        await pool.end();
        await probe.query(`DROP DATABASE \`${database}\``);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
