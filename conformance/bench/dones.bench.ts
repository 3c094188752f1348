import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import type { Taskrow } from '@taskrow/core';
import { targets, label } from '../src/targets.js';
import { describeServer, inParallel, median, report, type BenchRow } from './lib.js';

// Dones against the best plain SQL through bare mysql2, same batches, same connections.
// Scale: TASKROW_BENCH_KEYS (default 1,000,000), TASKROW_BENCH_RUNS (default 3),
// TASKROW_BENCH_CLIENTS (default 200), TASKROW_BENCH_SHARED_KEYS (default 100,000),
// TASKROW_BENCH_SPREAD_MS (default 200: the window the spread case's clients start over).
const KEYS = Number(process.env['TASKROW_BENCH_KEYS'] ?? 1_000_000);
const RUNS = Number(process.env['TASKROW_BENCH_RUNS'] ?? 3);
const CLIENTS = Number(process.env['TASKROW_BENCH_CLIENTS'] ?? 200);
const SHARED = Number(process.env['TASKROW_BENCH_SHARED_KEYS'] ?? 100_000);
const SPREAD_MS = Number(process.env['TASKROW_BENCH_SPREAD_MS'] ?? 200);
/** Runs of each overlapping case: a few seconds each, and the case with all clients at once varies most. */
const OVERLAP_RUNS = Math.max(RUNS, 9);
const BATCH = 2000;

const lockWaits = (w: { waits: number; ms: number }): string =>
  `${Math.round(w.waits / OVERLAP_RUNS).toLocaleString('en-US')} waits, ${(w.ms / OVERLAP_RUNS / 1000).toFixed(1)} s`;

const keyOf = (i: number): string => `job-${String(i).padStart(8, '0')}/chunk.out`;

/** The baseline schema: what a careful hand-written marker table looks like (dones' own, fixed). */
const BASE_DDL = (t: string): string =>
  `CREATE TABLE ${t} (ns VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, k VARBINARY(1024) NOT NULL,
   marked_at DATETIME(6) NOT NULL, PRIMARY KEY (ns, k)) ENGINE=InnoDB`;

/** The baseline's INSERT of one batch and its values (mysql2 formats them into the text, a Buffer as `X'..'`). */
const baselineInsert = (t: string, ns: string, part: readonly string[]): [string, (string | Buffer)[]] => [
  `INSERT IGNORE INTO ${t} (ns, k, marked_at) VALUES ${part.map(() => '(?, ?, UTC_TIMESTAMP(6))').join(', ')}`,
  part.flatMap((k) => [ns, Buffer.from(k)]),
];

/** The text the driver sends for one baseline batch. */
const baselineStatement = (t: string, ns: string, part: readonly string[]): string => mysql.format(...baselineInsert(t, ns, part));

async function baselineMark(conn: mysql.Connection | mysql.Pool, t: string, ns: string, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += BATCH) await conn.query(...baselineInsert(t, ns, keys.slice(i, i + BATCH)));
}

/** One side of the overlapping marks: `run` marks client `c`'s batch; `prepare` runs before each timed run. */
interface Side {
  prepare?: (run: number) => void;
  run: (c: number, run: number) => Promise<unknown>;
}

/** One side's seconds per run and the row lock waits of all its runs. */
interface Runs {
  secs: number[];
  waits: { waits: number; ms: number };
}

/**
 * OVERLAP_RUNS rounds of every side, one after the other in each round, each round starting one
 * side later than the round before (no side always runs first); in a run, client `c` starts
 * `startOf(c)` ms after the clock starts (0: all clients at once).
 */
async function overlapping(pool: mysql.Pool, sides: Record<string, Side>, clients: number, startOf: (c: number) => number): Promise<Record<string, Runs>> {
  const out: Record<string, Runs> = {};
  const names = Object.keys(sides);
  for (let run = 0; run < OVERLAP_RUNS; run++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + run) % names.length]!;
      const side = sides[name]!;
      side.prepare?.(run);
      const r = (out[name] ??= { secs: [], waits: { waits: 0, ms: 0 } });
      r.secs.push(
        await timeWaits(pool, r.waits, () =>
          inParallel(clients, clients, async (c) => {
            const ms = startOf(c);
            if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
            await side.run(c, run);
          }),
        ),
      );
    }
  }
  return out;
}

/**
 * Start times for `n` clients over `spreadMs`: one slot each, `spreadMs / n` apart, in a fixed
 * shuffled order (a seeded generator, so every side and every run sees the same schedule).
 */
function spreadStarts(n: number, spreadMs: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  let seed = 0x2f6b;
  for (let i = n - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    const j = seed % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const starts = new Array<number>(n).fill(0);
  for (const [slot, c] of order.entries()) starts[c] = (slot * spreadMs) / n;
  return starts;
}

/** Runs `fn` again on a deadlock (errno 1213), with backoff, as any careful caller of the baseline must. */
async function retryingDeadlocks(fn: () => Promise<unknown>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await fn();
      return;
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
      const overlapNotes: string[] = [];
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
          penT.push(
            await time(async () => {
              for await (const _ of tr.dones('half').pending(keys)) nt += 1;
            }),
          );
          if (nt !== KEYS / 2 || nb !== KEYS / 2) throw new Error(`pending counts differ: taskrow ${nt}, baseline ${nb}, expected ${KEYS / 2}`);
        }
        rows.push({ scenario: `pending over ${KEYS} candidates, half done`, taskrow: KEYS / median(penT), baseline: KEYS / median(penB), unit: 'ops/s' });

        // 3. CLIENTS connections, each marking 1,000 keys drawn from SHARED keys (every key about twice),
        //    all at once, then starting over SPREAD_MS in a fixed random order (the same for both sides).
        const per = Math.max(1, Math.floor((2 * SHARED) / CLIENTS));
        const batches = Array.from({ length: CLIENTS }, (_, c) => Array.from({ length: per }, (_, j) => keyOf((c * (per >> 1) + j) % SHARED)));
        const conns = await Promise.all(Array.from({ length: CLIENTS }, () => mysql.createConnection(target.url)));
        const trs = await Promise.all(conns.map((c) => taskrow(c, { prefix })));
        const marks = CLIENTS * per;
        const baselineSide = (tag: string): Side => ({ run: (c, run) => retryingDeadlocks(() => baselineMark(conns[c]!, base, `${tag}${run}`, batches[c]!)) });
        const taskrowSide = (tag: string): Side => ({ run: (c, run) => trs[c]!.dones(`${tag}${run}`).mark(batches[c]!) });
        let built: string[] = [];
        const prebuilt: Side = {
          prepare: (run) => void (built = batches.map((b) => baselineStatement(base, `p${run}`, b))),
          run: (c) => retryingDeadlocks(() => conns[c]!.query(built[c]!)),
        };
        const once = await overlapping(pool, { taskrow: taskrowSide('c'), baseline: baselineSide('c'), prebuilt }, CLIENTS, () => 0);
        const starts = spreadStarts(CLIENTS, SPREAD_MS);
        const spread = await overlapping(pool, { taskrow: taskrowSide('s'), baseline: baselineSide('s') }, CLIENTS, (c) => starts[c]!);
        await Promise.all(conns.map((c) => c.end()));
        const rate = (r: Runs | undefined): number => marks / median(r!.secs);
        rows.push({
          scenario: `${CLIENTS} connections marking ${SHARED} shared keys at once (${marks} marks)`,
          taskrow: rate(once['taskrow']),
          baseline: rate(once['baseline']),
          unit: 'ops/s',
        });
        rows.push({
          scenario: `the same, starting over ${SPREAD_MS} ms in random order`,
          taskrow: rate(spread['taskrow']),
          baseline: rate(spread['baseline']),
          unit: 'ops/s',
        });
        const waits = (r: Record<string, Runs>): string => `taskrow ${lockWaits(r['taskrow']!.waits)}, baseline ${lockWaits(r['baseline']!.waits)}`;
        overlapNotes.push(
          `${CLIENTS} connections, row lock waits a run (Innodb_row_lock_waits, total wait of all waiters): at once ${waits(once)}; spread ${waits(spread)}`,
          `at once, the baseline with its statements formatted before the start: ${Math.round(rate(once['prebuilt'])).toLocaleString('en-US')} ops/s, ${(rate(once['prebuilt']) / rate(once['baseline'])).toFixed(2)}x of the baseline (${lockWaits(once['prebuilt']!.waits)})`,
        );

        // 4. clear a namespace of KEYS keys: taskrow moves it to a new generation; the baseline deletes.
        const clearT = await time(() => tr.dones('m0').clear({ purge: 'none' }));
        const clearB = await time(() => pool.query(`DELETE FROM ${base} WHERE ns = ?`, ['m0']));
        rows.push({ scenario: `clear a namespace of ${KEYS} keys (returns)`, taskrow: clearT, baseline: clearB, unit: 's' });
        const purge = await time(() => tr.purgeCleared());

        report(`Dones vs bare mysql2 (${label(target)})`, server, rows, [
          `medians of ${RUNS} runs (${OVERLAP_RUNS} for the overlapping connections); baseline: PRIMARY KEY (ns, k VARBINARY) with INSERT IGNORE / SELECT ... IN batches of ${BATCH} on a pool of 8; pending baseline runs its lookups one at a time, taskrow keeps 3 in flight`,
          `the concurrent baseline retries deadlocks (errno 1213) itself, as any caller must`,
          ...overlapNotes,
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
