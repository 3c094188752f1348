import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import { label, targets } from '../src/targets.js';

// Crash test of the Queue, outside the unit suite: `pnpm crash` (or `pnpm crash queue`).
// WORKERS child processes run queue workers over JOBS jobs; every KILL_MIN..KILL_MAX ms one of
// them, picked at random, is killed with SIGKILL mid-batch and replaced. Afterwards every job must
// be done, and the completions table (written in the same transaction as each ack) must hold
// exactly one row per job. Scale: TASKROW_CRASH_JOBS (default 10,000), TASKROW_CRASH_WORKERS
// (default 4), TASKROW_CRASH_TARGETS (labels such as "mariadb 10.11"; default every server).
const JOBS = Number(process.env['TASKROW_CRASH_JOBS'] ?? 10_000);
const WORKERS = Number(process.env['TASKROW_CRASH_WORKERS'] ?? 4);
const ONLY = process.env['TASKROW_CRASH_TARGETS']?.split(',').map((s) => s.trim());
const KILL_MIN = 150;
const KILL_MAX = 600;
const LIMIT_SECONDS = 600;
const script = fileURLToPath(new URL('./queue-crash-worker.mjs', import.meta.url));

for (const target of targets().filter((t) => !ONLY || ONLY.includes(label(t)))) {
  describe(`${label(target)} · queue crash`, () => {
    it(`${JOBS.toLocaleString('en-US')} jobs through ${WORKERS} worker processes killed with SIGKILL at random: every job done exactly once`, async () => {
      const prefix = `crash${process.pid}_`;
      const name = 'crash';
      const completions = `${prefix}completions`;
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 4 });
      const tr = await taskrow(pool, { prefix });
      await tr.migrate();
      await pool.query(`CREATE TABLE \`${completions}\` (job_id BIGINT UNSIGNED NOT NULL, pid INT NOT NULL, attempt INT NOT NULL, KEY (job_id)) ENGINE=InnoDB`);
      const children = new Set<ChildProcess>();
      const spawnWorker = (): Promise<void> =>
        new Promise((resolve, reject) => {
          const child = fork(script, [], {
            env: { ...process.env, CRASH_URL: target.url, CRASH_PREFIX: prefix, CRASH_QUEUE: name, CRASH_TABLE: completions },
            stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
          });
          children.add(child);
          child.once('message', () => resolve());
          child.once('exit', () => children.delete(child));
          child.once('error', reject);
        });
      let kills = 0;
      try {
        const ids: number[] = [];
        for (let i = 0; i < JOBS; i += 1000) {
          const res = await tr.queue(name).enqueueMany(Array.from({ length: Math.min(1000, JOBS - i) }, (_, k) => ({ payload: i + k, maxAttempts: 1000 })));
          ids.push(...res.map((r) => r.id));
        }
        const t0 = performance.now();
        await Promise.all(Array.from({ length: WORKERS }, spawnWorker));
        const left = async (): Promise<number> =>
          Number((await pool.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${prefix}queue_jobs\` WHERE queue = ?`, [name]))[0][0]?.['n']);
        while ((await left()) > 0) {
          if (performance.now() - t0 > LIMIT_SECONDS * 1000) throw new Error(`not done after ${LIMIT_SECONDS} s`);
          await new Promise((r) => setTimeout(r, KILL_MIN + Math.random() * (KILL_MAX - KILL_MIN)));
          const victims = [...children];
          const victim = victims[Math.floor(Math.random() * victims.length)];
          if (victim?.kill('SIGKILL')) {
            kills += 1;
            await new Promise((r) => (victim.exitCode !== null || victim.signalCode !== null ? r(undefined) : victim.once('exit', r)));
            await spawnWorker();
          }
        }
        const seconds = (performance.now() - t0) / 1000;
        const [[stats]] = await pool.query<mysql.RowDataPacket[]>(
          `SELECT COUNT(*) AS n, COUNT(DISTINCT job_id) AS jobs, COUNT(DISTINCT pid) AS pids, SUM(attempt > 1) AS retaken FROM \`${completions}\``,
        );
        const [[dead]] = await pool.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${prefix}queue_jobs\` WHERE queue = ?`, [name]);
        const [done] = await pool.query<mysql.RowDataPacket[]>(`SELECT DISTINCT job_id AS id FROM \`${completions}\``);
        const enqueued = new Set(ids);
        const strangers = done.filter((r) => !enqueued.has(Number(r['id']))).length;
        process.stdout.write(
          `\n## Queue crash test (${label(target)}): ${JOBS} jobs, ${WORKERS} worker processes, ${kills} SIGKILLs in ${seconds.toFixed(1)} s; ` +
            `completions ${stats!['n']}, distinct jobs completed ${stats!['jobs']}, by ${stats!['pids']} processes; ` +
            `${stats!['retaken']} jobs completed on a later attempt (taken back from a killed worker); jobs left ${dead!['n']}\n`,
        );
        expect(kills).toBeGreaterThan(0);
        expect(Number(stats!['retaken'])).toBeGreaterThan(0);
        expect(Number(dead!['n'])).toBe(0);
        expect(Number(stats!['jobs'])).toBe(JOBS);
        expect(Number(stats!['n'])).toBe(JOBS);
        expect(strangers).toBe(0);
      } finally {
        for (const c of children) c.kill('SIGKILL');
        await pool.query(`DROP TABLE IF EXISTS \`${completions}\``);
        await pool.query(`DROP TABLE IF EXISTS \`${prefix}queue_jobs\``);
        const [rest] = await pool.query<mysql.RowDataPacket[]>(
          'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
          [`${prefix.replace(/_/g, '\\_')}%`],
        );
        for (const r of rest) await pool.query(`DROP TABLE IF EXISTS \`${String(r['t'])}\``);
        await pool.end();
      }
    });
  });
}
