import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import type { Taskrow } from '@taskrow/core';
import { targets, label } from '../src/targets.js';
import { describeServer, inParallel, median, report, type BenchRow } from './lib.js';

// Dones against the best plain SQL through bare mysql2, same batches, same connections.
// Scale: TASKROW_BENCH_KEYS (default 1,000,000), TASKROW_BENCH_RUNS (default 3),
// TASKROW_BENCH_CLIENTS (default 200), TASKROW_BENCH_SHARED_KEYS (default 100,000).
const KEYS = Number(process.env['TASKROW_BENCH_KEYS'] ?? 1_000_000);
const RUNS = Number(process.env['TASKROW_BENCH_RUNS'] ?? 3);
const CLIENTS = Number(process.env['TASKROW_BENCH_CLIENTS'] ?? 200);
const SHARED = Number(process.env['TASKROW_BENCH_SHARED_KEYS'] ?? 100_000);
const BATCH = 2000;

const lockWaits = (w: { waits: number; ms: number }): string =>
  `${Math.round(w.waits / RUNS).toLocaleString('en-US')} waits, ${(w.ms / RUNS / 1000).toFixed(1)} s`;

const keyOf = (i: number): string => `job-${String(i).padStart(8, '0')}/chunk.out`;

/** The baseline schema: what a careful hand-written marker table looks like (dones' own, fixed). */
const BASE_DDL = (t: string): string =>
  `CREATE TABLE ${t} (ns VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, k VARBINARY(1024) NOT NULL,
   marked_at DATETIME(6) NOT NULL, PRIMARY KEY (ns, k)) ENGINE=InnoDB`;

async function baselineMark(conn: mysql.Connection | mysql.Pool, t: string, ns: string, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += BATCH) {
    const part = keys.slice(i, i + BATCH);
    const values = part.flatMap((k) => [ns, Buffer.from(k)]);
    await conn.query(`INSERT IGNORE INTO ${t} (ns, k, marked_at) VALUES ${part.map(() => '(?, ?, UTC_TIMESTAMP(6))').join(', ')}`, values);
  }
}

/** Baseline for many clients: the same INSERT IGNORE, retried on deadlock as any careful caller must. */
async function baselineMarkRetrying(conn: mysql.Connection, t: string, ns: string, keys: readonly string[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await baselineMark(conn, t, ns, keys);
    } catch (err) {
      if ((err as { errno?: number }).errno !== 1213 || attempt > 50) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 10 * 2 ** Math.min(attempt, 6)));
    }
  }
}

async function baselinePending(conn: mysql.Pool, t: string, ns: string, keys: readonly string[]): Promise<number> {
  let pending = 0;
  for (let i = 0; i < keys.length; i += BATCH) {
    const part = keys.slice(i, i + BATCH);
    const [rows] = await conn.query<mysql.RowDataPacket[]>(`SELECT k FROM ${t} WHERE ns = ? AND k IN (?)`, [ns, part.map((k) => Buffer.from(k))]);
    const done = new Set(rows.map((r) => (r['k'] as Buffer).toString()));
    for (const k of part) if (!done.has(k)) pending += 1;
  }
  return pending;
}

/** The server's row lock waits so far and their total time in ms (`Innodb_row_lock_waits` / `_time`, both engines). */
async function rowLockWaits(pool: mysql.Pool): Promise<{ waits: number; ms: number }> {
  const [rows] = await pool.query<mysql.RowDataPacket[]>(`SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_row_lock_time')`);
  const of = (name: string): number => Number(rows.find((r) => r['Variable_name'] === name)?.['Value'] ?? NaN);
  return { waits: of('Innodb_row_lock_waits'), ms: of('Innodb_row_lock_time') };
}

/** Runs `fn` and adds the row lock waits it caused to `sum`; resolves to its time in seconds. */
async function timeWaits(pool: mysql.Pool, sum: { waits: number; ms: number }, fn: () => Promise<unknown>): Promise<number> {
  const before = await rowLockWaits(pool);
  const seconds = await time(fn);
  const after = await rowLockWaits(pool);
  sum.waits += after.waits - before.waits;
  sum.ms += after.ms - before.ms;
  return seconds;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

for (const target of targets()) {
  describe(`dones bench · ${label(target)}`, () => {
    it(`mark ${KEYS.toLocaleString('en-US')} keys, pending over ${KEYS.toLocaleString('en-US')} candidates, ${CLIENTS} clients marking ${SHARED.toLocaleString('en-US')} shared keys, clear`, async () => {
      const server = await describeServer(target);
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 8 });
      const prefix = `bench${process.pid}_`;
      const base = `\`${prefix}baseline\``;
      const tr: Taskrow = await taskrow(pool, { prefix });
      await tr.migrate();
      await pool.query(BASE_DDL(base));
      const keys = Array.from({ length: KEYS }, (_, i) => keyOf(i));
      const rows: BenchRow[] = [];
      try {
        // 1. mark KEYS keys in batches of 2,000 on one connection at a time, fresh namespace per run.
        const markT: number[] = [];
        const markB: number[] = [];
        for (let run = 0; run < RUNS; run++) {
          markB.push(await time(() => baselineMark(pool, base, `m${run}`, keys)));
          markT.push(await time(() => tr.dones(`m${run}`).mark(keys)));
        }
        rows.push({ scenario: `mark ${KEYS} keys (batches of ${BATCH})`, taskrow: KEYS / median(markT), baseline: KEYS / median(markB), unit: 'ops/s' });

        // 2. pending over KEYS candidates, half done: namespace "m0" holds every key; "half" holds the even ones.
        const even = keys.filter((_, i) => i % 2 === 0);
        await baselineMark(pool, base, 'half', even);
        await tr.dones('half').mark(even);
        const penT: number[] = [];
        const penB: number[] = [];
        for (let run = 0; run < RUNS; run++) {
          let nb = 0;
          penB.push(await time(async () => void (nb = await baselinePending(pool, base, 'half', keys))));
          let nt = 0;
          penT.push(await time(async () => {
            for await (const _ of tr.dones('half').pending(keys)) nt += 1;
          }));
          if (nt !== KEYS / 2 || nb !== KEYS / 2) throw new Error(`pending counts differ: taskrow ${nt}, baseline ${nb}, expected ${KEYS / 2}`);
        }
        rows.push({ scenario: `pending over ${KEYS} candidates, half done`, taskrow: KEYS / median(penT), baseline: KEYS / median(penB), unit: 'ops/s' });

        // 3. CLIENTS connections, each marking 1,000 keys drawn from SHARED keys (every key about twice).
        const per = Math.max(1, Math.floor((2 * SHARED) / CLIENTS));
        const batches = Array.from({ length: CLIENTS }, (_, c) => Array.from({ length: per }, (_, j) => keyOf((c * (per >> 1) + j) % SHARED)));
        const conns = await Promise.all(Array.from({ length: CLIENTS }, () => mysql.createConnection(target.url)));
        const trs = await Promise.all(conns.map((c) => taskrow(c, { prefix })));
        const conT: number[] = [];
        const conB: number[] = [];
        const waitsT = { waits: 0, ms: 0 };
        const waitsB = { waits: 0, ms: 0 };
        for (let run = 0; run < RUNS; run++) {
          conB.push(await timeWaits(pool, waitsB, () => inParallel(CLIENTS, CLIENTS, (c) => baselineMarkRetrying(conns[c]!, base, `c${run}`, batches[c]!))));
          conT.push(await timeWaits(pool, waitsT, () => inParallel(CLIENTS, CLIENTS, async (c) => void (await trs[c]!.dones(`c${run}`).mark(batches[c]!)))));
        }
        await Promise.all(conns.map((c) => c.end()));
        const marks = CLIENTS * per;
        rows.push({ scenario: `${CLIENTS} connections marking ${SHARED} shared keys (${marks} marks)`, taskrow: marks / median(conT), baseline: marks / median(conB), unit: 'ops/s' });

        // 4. clear a namespace of KEYS keys: taskrow moves it to a new generation; the baseline deletes.
        const clearT = await time(() => tr.dones('m0').clear({ purge: 'none' }));
        const clearB = await time(() => pool.query(`DELETE FROM ${base} WHERE ns = ?`, ['m0']));
        rows.push({ scenario: `clear a namespace of ${KEYS} keys (returns)`, taskrow: clearT, baseline: clearB, unit: 's' });
        const purge = await time(() => tr.purgeCleared());

        report(`Dones vs bare mysql2 (${label(target)})`, server, rows, [
          `medians of ${RUNS} runs; baseline: PRIMARY KEY (ns, k VARBINARY) with INSERT IGNORE / SELECT ... IN batches of ${BATCH} on a pool of 8; pending baseline runs its lookups one at a time, taskrow keeps 3 in flight`,
          `the concurrent baseline retries deadlocks (errno 1213) itself, as any caller must`,
          `${CLIENTS} connections, row lock waits a run (Innodb_row_lock_waits, total wait of all waiters): taskrow ${lockWaits(waitsT)}, baseline ${lockWaits(waitsB)}`,
          `background purge of the cleared ${KEYS} keys took ${purge.toFixed(1)} s (not blocking other namespaces)`,
        ]);
      } finally {
        await pool.query(`DROP TABLE IF EXISTS ${base}`);
        for (const t of ['dones', 'dones_ns', 'dones_gen', 'schema_migrations']) await pool.query(`DROP TABLE IF EXISTS \`${prefix}${t}\``);
        await pool.end();
      }
    });
  });
}
