import { Queue } from 'bullmq';
import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import { label, targets } from '../src/targets.js';
import { describeServer, inParallel, median, report, type BenchRow } from './lib.js';
import { BASELINE_DDL, letters } from './queue-baseline.js';
import { startRedis } from './queue-bullmq.js';

// What exact enqueues cost. taskrow's enqueue writes a receipt in the same transaction (so a retry
// after a lost COMMIT reply returns the first attempt's id instead of inserting again): BEGIN,
// INSERT job, INSERT receipt, COMMIT. The baseline is one autocommit INSERT of the same payload
// through bare mysql2 (no retry safety); BullMQ's `add()` on a local Redis is the peer. Batches
// are also read against their floor: the same rows (queue, times, token, the payload's JSON) in one
// autocommit multi-row INSERT into a copy of taskrow's own jobs table (same columns and indexes),
// with no transaction, receipt, validation or ids.
// Scale: TASKROW_BENCH_ENQUEUES (default 3,000 per run), TASKROW_BENCH_RUNS (default 3),
// TASKROW_BENCH_PRODUCERS (concurrent producers of the second scenario, default 16),
// TASKROW_BENCH_TARGETS (labels such as "mysql 9.7"; default every server).
const N = Number(process.env['TASKROW_BENCH_ENQUEUES'] ?? 3000);
const RUNS = Number(process.env['TASKROW_BENCH_RUNS'] ?? 3);
const PRODUCERS = Number(process.env['TASKROW_BENCH_PRODUCERS'] ?? 16);
const ONLY = process.env['TASKROW_BENCH_TARGETS']?.split(',').map((s) => s.trim());
/** The batch sizes of the `enqueueMany` scenarios. */
const BATCHES = [100, 1000];

/** Payloads made before any timing (making 64 random letters costs more than some enqueues): a ring of 2,000 fresh objects. */
const PAYLOADS = Array.from({ length: 2000 }, () => ({ d: letters(), e: letters() }));
let next = 0;
const payload = (): { d: string; e: string } => {
  const p = PAYLOADS[next++ % PAYLOADS.length]!;
  return { d: p.d, e: p.e };
};

/**
 * Median rates (operations per second) of `RUNS` runs of `n` operations, `width` at a time, of
 * each of `ops`: the runs take turns (one of each, then again), so a slower minute of this shared
 * machine falls on every contender alike.
 */
async function rates(n: number, width: number, ops: readonly ((i: number) => Promise<unknown>)[]): Promise<number[]> {
  const runs: number[][] = ops.map(() => []);
  for (let r = 0; r < RUNS; r++) {
    for (const [k, op] of ops.entries()) {
      const t0 = performance.now();
      await inParallel(n, width, async (i) => void (await op(i)));
      runs[k]!.push(n / ((performance.now() - t0) / 1000));
    }
  }
  return runs.map(median);
}

for (const target of targets().filter((t) => !ONLY || ONLY.includes(label(t)))) {
  describe(`enqueue bench · ${label(target)}`, () => {
    it(`${N} single enqueues (1 and ${PRODUCERS} producers) and batches of ${BATCHES.join(' and ')}: taskrow with receipts, a bare INSERT, BullMQ`, async () => {
      const server = await describeServer(target);
      const pool = mysql.createPool({ uri: target.url, connectionLimit: PRODUCERS });
      const prefix = `ebench${process.pid}_`;
      const base = `\`${prefix}bare_jobs\``;
      const tr = await taskrow(pool, { prefix });
      await tr.migrate();
      await pool.query(BASELINE_DDL(base));
      const q = tr.queue('bench');
      const bare = (): Promise<unknown> => {
        const p = payload();
        return pool.query(`INSERT INTO ${base} (d, e, status) VALUES (?, ?, 'unclaimed')`, [p.d, p.e]);
      };
      const bareBatch = (size: number) => (): Promise<unknown> =>
        pool.query(`INSERT INTO ${base} (d, e, status) VALUES ?`, [
          Array.from({ length: size }, () => {
            const p = payload();
            return [p.d, p.e, 'unclaimed'];
          }),
        ]);
      const floor = `\`${prefix}floor_jobs\``;
      await pool.query(`CREATE TABLE ${floor} LIKE \`${prefix}queue_jobs\``);
      // The floor's row: constants in the text, the statement's own time for the three times.
      const floorRow = "('bench', '', 0, 0, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), 25, ?, NULL, ?, NULL, UTC_TIMESTAMP(6))";
      const floorBatch = (size: number) => (): Promise<unknown> => {
        const token = 1 + Math.floor(Math.random() * 2 ** 47);
        return pool.query(
          `INSERT INTO ${floor} (queue, grp, phase, priority, ready_priority, due_at, run_at, max_attempts, token, dedup_k, payload, conc_key, created_at) VALUES ${Array(size).fill(floorRow).join(', ')}`,
          Array.from({ length: size }, () => [token, JSON.stringify(payload())]).flat(),
        );
      };
      const redis = await startRedis();
      const bull = redis ? new Queue(`ebench${process.pid}`, { connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null } }) : undefined;
      const opts = { removeOnComplete: true, removeOnFail: true };
      try {
        const rows: BenchRow[] = [];
        const peer: string[] = [];
        const scenarios: [string, number, number, () => Promise<unknown>, () => Promise<unknown>, (() => Promise<unknown>) | undefined][] = [
          ['single enqueue, 1 producer', N, 1, () => q.enqueue(payload()), bare, bull && (() => bull.add('job', payload(), opts))],
          [`single enqueue, ${PRODUCERS} producers`, N, PRODUCERS, () => q.enqueue(payload()), bare, bull && (() => bull.add('job', payload(), opts))],
          ...BATCHES.map((size): (typeof scenarios)[number] => [
            `enqueueMany of ${size}, 1 producer (jobs/s)`,
            Math.max(20, Math.ceil(N / size)),
            1,
            () => q.enqueueMany(Array.from({ length: size }, () => ({ payload: payload() }))),
            bareBatch(size),
            bull && (() => bull.addBulk(Array.from({ length: size }, () => ({ name: 'job', data: payload(), opts })))),
          ]),
        ];
        for (const [scenario, n, width, ours, theirs, bullmq] of scenarios) {
          const per = Number(/enqueueMany of (\d+)/.exec(scenario)?.[1] ?? 1);
          const contenders = { ours, theirs, floor: per > 1 ? floorBatch(per) : undefined, bullmq };
          const entries = Object.entries(contenders).filter((e): e is [string, () => Promise<unknown>] => e[1] !== undefined);
          const measured = await rates(
            n,
            width,
            entries.map((e) => e[1]),
          );
          const r = Object.fromEntries(entries.map(([name], k) => [name, measured[k]! * per]));
          const t = r['ours']!;
          rows.push({ scenario, taskrow: t, baseline: r['theirs']!, unit: 'ops/s' });
          if (r['floor'] !== undefined) rows.push({ scenario: `${scenario} against its floor`, taskrow: t, baseline: r['floor'], unit: 'ops/s' });
          const p = r['bullmq'];
          if (p === undefined) continue;
          peer.push(`${scenario}: BullMQ ${Math.round(p).toLocaleString('en-US')}/s (taskrow ${(t / p).toFixed(2)}x)`);
        }
        report('Enqueue cost: taskrow (job + receipt in one transaction) against one autocommit INSERT', server, rows, [
          `medians of ${RUNS} runs; mysql2 pool of ${PRODUCERS}; payload two 64-letter strings (made before timing); the baseline row has no receipt and no retry safety`,
          ...(redis ? [`BullMQ on redis ${redis.version} (no persistence), same payloads:`, ...peer] : ['BullMQ: redis-server not installed, not run']),
        ]);
      } finally {
        await bull?.obliterate({ force: true }).catch(() => undefined);
        await bull?.close();
        await redis?.stop();
        const [tables] = await pool.query<mysql.RowDataPacket[]>(
          'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
          [`${prefix}%`],
        );
        for (const { t } of tables) await pool.query(`DROP TABLE IF EXISTS \`${String(t)}\``);
        await pool.end();
      }
    });
  });
}
