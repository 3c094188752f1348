import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import type { Loop } from '@taskrow/core';
import { targets, label } from '../src/targets.js';
import { delayProxy, roundTripMs } from './latency.js';
import { describeServer, median, report, type BenchRow } from './lib.js';
import { loopCycles } from './loop-cycle.js';

// Loop: a steady-state cycle of get(100) -> did by W workers, each on its own connection, against
// doloop's own statements (LOCK TABLES ... WRITE around every call) through bare mysql2 on the same
// server; each worker count three times for taskrow, with loop handles as created by default
// (adaptive turns), with `turns: false` and with `turns: true` (the workers share this process, so
// getters with turns take them in it first). Scale: TASKROW_BENCH_LOOP_IDS (default 100,000), TASKROW_BENCH_LOOP_WORKERS (default
// "1,4,16,64"), TASKROW_BENCH_LOOP_SECONDS per measurement (default 4), TASKROW_BENCH_RUNS (default 3),
// TASKROW_BENCH_TARGETS (labels; default every server).
// A second table repeats the cycle with TASKROW_BENCH_LOOP_NET_WORKERS (default "16") workers through a
// loopback proxy that delays each direction by TASKROW_BENCH_LOOP_DELAY_MS (default 0.5; 0 skips it):
// a database across a network, where doloop's table lock is held for whole round trips.
const IDS = Number(process.env['TASKROW_BENCH_LOOP_IDS'] ?? 100_000);
const WORKERS = (process.env['TASKROW_BENCH_LOOP_WORKERS'] ?? '1,4,16,64').split(',').map(Number);
const SECONDS = Number(process.env['TASKROW_BENCH_LOOP_SECONDS'] ?? 4);
const RUNS = Number(process.env['TASKROW_BENCH_RUNS'] ?? 3);
const NET_WORKERS = (process.env['TASKROW_BENCH_LOOP_NET_WORKERS'] ?? '16').split(',').map(Number);
const DELAY_MS = Number(process.env['TASKROW_BENCH_LOOP_DELAY_MS'] ?? 0.5);
const ONLY = process.env['TASKROW_BENCH_TARGETS']?.split(',').map((s) => s.trim());
const LIMIT = 100;

/** doloop's table, as its create-doloop-table prints it. */
const DOLOOP_DDL = (t: string): string =>
  `CREATE TABLE ${t} (\`id\` INT NOT NULL, \`last_updated\` INT DEFAULT NULL, \`lock_until\` INT DEFAULT NULL,
   PRIMARY KEY (\`id\`), KEY \`lock_until\` (\`lock_until\`, \`last_updated\`)) ENGINE=InnoDB`;

/** doloop's `_run`: roll back, lock the table for writing, run, commit, unlock. */
async function doloopRun<T>(conn: mysql.Connection, t: string, query: () => Promise<T>): Promise<T> {
  await conn.query('ROLLBACK');
  await conn.query('UNLOCK TABLES');
  await conn.query('SET autocommit = 0');
  await conn.query(`LOCK TABLES ${t} WRITE`);
  try {
    const result = await query();
    await conn.query('COMMIT');
    return result;
  } catch (err) {
    await conn.query('ROLLBACK');
    throw err;
  } finally {
    await conn.query('UNLOCK TABLES');
  }
}

/** doloop.get(limit, lock_for=3600, min_loop_time=0), statement for statement. */
function doloopGet(conn: mysql.Connection, t: string, limit: number): Promise<number[]> {
  return doloopRun(conn, t, async () => {
    const [bumped] = await conn.query<mysql.RowDataPacket[]>(
      `SELECT \`id\` FROM ${t} WHERE \`lock_until\` <= UNIX_TIMESTAMP() ORDER BY \`lock_until\`, \`last_updated\` LIMIT ?`,
      [limit],
    );
    const ids = bumped.map((r) => Number(r['id']));
    if (ids.length < limit) {
      const [unlocked] = await conn.query<mysql.RowDataPacket[]>(
        `SELECT \`id\` FROM ${t} WHERE \`lock_until\` IS NULL AND (\`last_updated\` IS NULL OR \`last_updated\` <= UNIX_TIMESTAMP() - ?)
         ORDER BY \`last_updated\` LIMIT ?`,
        [0, limit - ids.length],
      );
      ids.push(...unlocked.map((r) => Number(r['id'])));
    }
    if (ids.length === 0) return [];
    await conn.query(`UPDATE ${t} SET \`lock_until\` = UNIX_TIMESTAMP() + ? WHERE \`id\` IN (?)`, [3600, ids]);
    return ids;
  });
}

/** doloop.did(ids, auto_add=True), statement for statement. */
function doloopDid(conn: mysql.Connection, t: string, ids: readonly number[]): Promise<void> {
  return doloopRun(conn, t, async () => {
    await conn.query(`INSERT IGNORE INTO ${t} (\`id\`) VALUES ${ids.map(() => '(?)').join(', ')}`, [...ids]);
    await conn.query(`UPDATE ${t} SET \`last_updated\` = UNIX_TIMESTAMP(), \`lock_until\` = NULL WHERE \`id\` IN (?)`, [ids]);
  });
}

/** For each worker count: taskrow and doloop's statements, alternating, RUNS times; medians of ids/s. */
async function compare(url: string, prefix: string, base: string, counts: readonly number[]): Promise<BenchRow[]> {
  const max = Math.max(...counts);
  const conns = await Promise.all(Array.from({ length: max }, () => mysql.createConnection(url)));
  const baseConns = await Promise.all(Array.from({ length: max }, () => mysql.createConnection(url)));
  try {
    const clients = await Promise.all(conns.map((c) => taskrow(c, { prefix })));
    const loops: Loop<number>[] = clients.map((tr) => tr.loop('bench', { idType: 'int' }));
    const turnLoops: Loop<number>[] = clients.map((tr) => tr.loop('bench', { idType: 'int', turns: true }));
    const freeLoops: Loop<number>[] = clients.map((tr) => tr.loop('bench', { idType: 'int', turns: false }));
    const cycle = (ls: Loop<number>[], workers: number): Promise<number> =>
      loopCycles(
        workers,
        SECONDS,
        (w) => ls[w]!.get(LIMIT, { minLoopTime: 0 }),
        async (w, got) => void (await ls[w]!.did(got)),
      );
    const rows: BenchRow[] = [];
    for (const workers of counts) {
      const [t, turns, free, b]: [number[], number[], number[], number[]] = [[], [], [], []];
      for (let run = 0; run < RUNS; run++) {
        b.push(
          await loopCycles(
            workers,
            SECONDS,
            (w) => doloopGet(baseConns[w]!, base, LIMIT),
            (w, got) => doloopDid(baseConns[w]!, base, got),
          ),
        );
        t.push(await cycle(loops, workers));
        turns.push(await cycle(turnLoops, workers));
        free.push(await cycle(freeLoops, workers));
      }
      rows.push({
        scenario: `${workers} worker(s): get(${LIMIT}) -> did (adaptive turns, the default), ids/s`,
        taskrow: median(t),
        baseline: median(b),
        unit: 'ops/s',
      });
      rows.push({ scenario: `${workers} worker(s) without turns (turns: false), ids/s`, taskrow: median(free), baseline: median(b), unit: 'ops/s' });
      rows.push({
        scenario: `${workers} worker(s) taking turns one at a time (turns: true), ids/s`,
        taskrow: median(turns),
        baseline: median(b),
        unit: 'ops/s',
      });
    }
    return rows;
  } finally {
    await Promise.allSettled([...conns, ...baseConns].map((c) => c.end()));
  }
}

const NOTES = [
  `each worker its own connection and client, all in one process (getters with turns take turns in it first); taskrow through @taskrow/mysql2, baseline doloop's statements (ROLLBACK, UNLOCK TABLES, SET autocommit = 0, LOCK TABLES ... WRITE, queries, COMMIT, UNLOCK TABLES) through bare mysql2`,
  `minLoopTime 0 (steady state: every id comes round again), lockFor 3600, did with autoAdd as the original's default`,
  `median of ${RUNS} runs of ${SECONDS} s per cell; no id was handed to two workers at once in any run (checked)`,
];

for (const target of targets().filter((t) => !ONLY || ONLY.includes(label(t)))) {
  describe(`loop bench · ${label(target)}`, () => {
    it(`get(${LIMIT}) -> did over ${IDS.toLocaleString('en-US')} ids with ${WORKERS.join(', ')} workers, against doloop's LOCK TABLES`, async () => {
      const server = await describeServer(target);
      const prefix = `bench${process.pid}l_`;
      const base = `\`${prefix}doloop\``;
      const admin = await mysql.createConnection(target.url);
      try {
        const setup = await taskrow(admin, { prefix });
        await setup.migrate();
        const loop = await setup.createLoop('bench', { idType: 'int' });
        await admin.query(DOLOOP_DDL(base));
        const ids = Array.from({ length: IDS }, (_, i) => i + 1);
        await loop.add(ids);
        for (let i = 0; i < IDS; i += 10_000) await admin.query(`INSERT INTO ${base} (\`id\`) VALUES ?`, [ids.slice(i, i + 10_000).map((id) => [id])]);
        report(`loop · ${label(target)} · ${IDS.toLocaleString('en-US')} ids`, server, await compare(target.url, prefix, base, WORKERS), NOTES);
        if (DELAY_MS > 0) {
          const proxy = await delayProxy(target.url, DELAY_MS);
          try {
            const direct = await roundTripMs(target.url);
            const proxied = await roundTripMs(proxy.url);
            const rows = await compare(proxy.url, prefix, base, NET_WORKERS);
            report(`loop · ${label(target)} · ${IDS.toLocaleString('en-US')} ids · across a network`, server, rows, [
              ...NOTES,
              `every connection through a loopback proxy in this process holding each chunk ${DELAY_MS} ms per direction: SELECT 1 round trip ${proxied.toFixed(2)} ms (direct: ${direct.toFixed(2)} ms)`,
            ]);
          } finally {
            await proxy.close();
          }
        }
      } finally {
        const [left] = await admin.query<mysql.RowDataPacket[]>(
          'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
          [`${prefix.replace(/_/g, '\\_')}%`],
        );
        for (const r of left) await admin.query(`DROP TABLE IF EXISTS \`${String(r['t'])}\``);
        await admin.end();
      }
    });
  });
}
