import { createHash, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import type { Resources } from '@taskrow/core';
import { targets, label } from '../src/targets.js';
import { describeServer, median, report, type BenchRow } from './lib.js';

// Resources: acquire-release cycles per second for N competing jobs, on disjoint and on overlapping
// keys, against the minimal hand-written SQL for the same cycle through bare mysql2.
// Scale: TASKROW_BENCH_JOBS (default "1,8,32"), TASKROW_BENCH_SECONDS per run (default 3),
// TASKROW_BENCH_RUNS (default 3).
const JOBS = (process.env['TASKROW_BENCH_JOBS'] ?? '1,8,32').split(',').map(Number);
const SECONDS = Number(process.env['TASKROW_BENCH_SECONDS'] ?? 3);
const RUNS = Number(process.env['TASKROW_BENCH_RUNS'] ?? 3);
const WAIT = 60_000;

/** Job i's keys. Overlapping: a ring of 4 keys, job i reads key (i+1)%4 and writes key i%4. */
function plan(shape: 'disjoint' | 'overlapping', n: number, tag: string): { inputs: string[]; outputs: string[] }[] {
  return Array.from({ length: n }, (_, i) =>
    shape === 'disjoint'
      ? { inputs: [`${tag}.in.${i}`], outputs: [`${tag}.out.${i}`] }
      : { inputs: [`${tag}.ring.${(i + 1) % 4}`], outputs: [`${tag}.ring.${i % 4}`] },
  );
}

/** Runs `cycle` on each of `n` jobs until `seconds` pass; resolves to cycles per second. */
async function cyclesPerSecond(n: number, seconds: number, cycle: (job: number) => Promise<void>): Promise<number> {
  const start = performance.now();
  const deadline = start + seconds * 1000;
  let total = 0;
  await Promise.all(
    Array.from({ length: n }, async (_, j) => {
      while (performance.now() < deadline) {
        await cycle(j);
        total += 1;
      }
    }),
  );
  return total / ((performance.now() - start) / 1000);
}

const digest = (k: string): Buffer => createHash('sha256').update(k, 'utf8').digest().subarray(0, 16);
const BASE_DDL = (p: string): string[] => [
  `CREATE TABLE \`${p}bkeys\` (h BINARY(16) NOT NULL PRIMARY KEY, present TINYINT NOT NULL) ENGINE=InnoDB`,
  `CREATE TABLE \`${p}blocks\` (h BINARY(16) NOT NULL, holder BINARY(16) NOT NULL, mode ENUM('reader','writer') NOT NULL,
   lease_until DATETIME(6) NOT NULL, PRIMARY KEY (h, holder)) ENGINE=InnoDB`,
];

/**
 * The least SQL a hand-rolled version of the same cycle needs: lock the key rows in digest order,
 * read their lock rows, check the rules, insert the locks, commit; then lock again, delete the
 * locks, mark the outputs, commit. Retries with the same 10 ms + jitter backoff while blocked.
 */
async function baselineCycle(pool: mysql.Pool, p: string, inputs: Buffer[], outputs: Buffer[]): Promise<void> {
  const all = [...inputs, ...outputs].sort(Buffer.compare);
  const holder = randomBytes(16);
  const outSet = new Set(outputs.map((b) => b.toString('hex')));
  const conn = await pool.getConnection();
  try {
    for (;;) {
      await conn.beginTransaction();
      const [keys] = await conn.query<mysql.RowDataPacket[]>(`SELECT h, present FROM \`${p}bkeys\` WHERE h IN (?) ORDER BY h FOR UPDATE`, [all]);
      const [locks] = await conn.query<mysql.RowDataPacket[]>(`SELECT h, mode FROM \`${p}blocks\` WHERE h IN (?) AND lease_until > UTC_TIMESTAMP(6)`, [all]);
      const present = new Set(keys.filter((r) => Number(r['present']) === 1).map((r) => (r['h'] as Buffer).toString('hex')));
      const busy = locks.some((l) => {
        const h = (l['h'] as Buffer).toString('hex');
        return outSet.has(h) || l['mode'] === 'writer';
      });
      const ok = !busy && inputs.every((b) => present.has(b.toString('hex')));
      if (ok) {
        await conn.query(
          `INSERT INTO \`${p}blocks\` (h, holder, mode, lease_until) VALUES ${all.map(() => '(?, ?, ?, UTC_TIMESTAMP(6) + INTERVAL 60 SECOND)').join(', ')}`,
          all.flatMap((h) => [h, holder, outSet.has(h.toString('hex')) ? 'writer' : 'reader']),
        );
      }
      await conn.commit();
      if (ok) break;
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 10));
    }
    await conn.beginTransaction();
    await conn.query(`SELECT h FROM \`${p}bkeys\` WHERE h IN (?) ORDER BY h FOR UPDATE`, [all]);
    await conn.query(`DELETE FROM \`${p}blocks\` WHERE holder = ? AND h IN (?)`, [holder, all]);
    await conn.query(`UPDATE \`${p}bkeys\` SET present = 1 WHERE h IN (?)`, [outputs]);
    await conn.commit();
  } catch (err) {
    await conn.rollback().catch(() => undefined);
    throw err;
  } finally {
    conn.release();
  }
}

for (const target of targets()) {
  describe(`resources bench · ${label(target)}`, () => {
    it(`acquire-release cycles for ${JOBS.join(', ')} competing jobs, disjoint and overlapping keys`, async () => {
      const server = await describeServer(target);
      const pool = mysql.createPool({ uri: target.url, connectionLimit: Math.max(...JOBS) + 4 });
      const prefix = `rbench${process.pid}_`;
      const tr = await taskrow(pool, { prefix });
      await tr.migrate();
      for (const sql of BASE_DDL(prefix)) await pool.query(sql);
      const r: Resources = tr.resources({ releaseOnExit: false });
      const rows: BenchRow[] = [];
      try {
        for (const shape of ['disjoint', 'overlapping'] as const) {
          for (const n of JOBS) {
            const tag = `${shape}.${n}`;
            const jobs = plan(shape, n, tag);
            const inputs = [...new Set(jobs.flatMap((j) => j.inputs))];
            await r.produce(inputs);
            const handles = jobs.map((j, i) => r.job(`${tag}.job.${i}`, { ...j, wait: WAIT, lease: 60_000 }));
            const bkeys = [...new Set(jobs.flatMap((j) => [...j.inputs, ...j.outputs]))];
            await pool.query(`INSERT INTO \`${prefix}bkeys\` (h, present) VALUES ? ON DUPLICATE KEY UPDATE present = present`, [
              bkeys.map((k) => [digest(k), inputs.includes(k) ? 1 : 0]),
            ]);
            const bjobs = jobs.map((j) => ({ inputs: j.inputs.map(digest), outputs: j.outputs.map(digest) }));
            const t: number[] = [];
            const b: number[] = [];
            for (let run = 0; run < RUNS; run++) {
              b.push(await cyclesPerSecond(n, SECONDS, (i) => baselineCycle(pool, prefix, bjobs[i]!.inputs, bjobs[i]!.outputs)));
              t.push(
                await cyclesPerSecond(n, SECONDS, async (i) => {
                  await handles[i]!.acquire();
                  await handles[i]!.release();
                }),
              );
            }
            rows.push({ scenario: `${n} job(s), ${shape} keys`, taskrow: median(t), baseline: median(b), unit: 'ops/s' });
          }
        }
        report(`Resources acquire-release cycles vs bare mysql2 (${label(target)})`, server, rows, [
          `medians of ${RUNS} runs of ${SECONDS} s; one mysql2 pool of ${Math.max(...JOBS) + 4} connections shared by all jobs; a cycle = acquire (one input, one output) + successful release`,
          'overlapping: a ring of 4 keys, job i reads key (i+1)%4 and writes key i%4 (writers exclude readers and other writers of their key)',
          'taskrow: READ COMMITTED transactions, key rows locked in digest order, job row, expired-lock cleanup, lease checks at release, flow history (throttled to once a second per edge), deadlock retries',
          'baseline omits: the running-jobs table, history, expired-lock cleanup, lost-lease checks at release, first-use key rows, isolation setting, retries, input validation',
        ]);
      } finally {
        const [tables] = await pool.query<mysql.RowDataPacket[]>(
          'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
          [`${prefix}%`],
        );
        for (const row of tables) await pool.query(`DROP TABLE IF EXISTS \`${String(row['t'])}\``);
        await pool.end();
      }
    });
  });
}
