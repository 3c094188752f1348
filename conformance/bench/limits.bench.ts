import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import { label, targets } from '../src/targets.js';
import { describeServer, dropPrefixed, median, report } from './lib.js';
import { letters } from './queue-baseline.js';
import { taskrowDrain } from './queue-taskrow.js';

// What a per-key concurrency limit costs a drain: the same jobs drained by the same workers, once
// with every job under one of KEYS concurrency keys limited to LIMIT running (admissions counted by
// the database), once without keys. The baseline is taskrow's own unlimited drain.
// Scale: TASKROW_BENCH_LIMIT_JOBS (default 20,000), TASKROW_BENCH_RUNS (default 3),
// TASKROW_BENCH_LIMIT_CONSUMERS (default 10), TASKROW_BENCH_LIMIT_KEYS (default 20), TASKROW_BENCH_LIMIT
// (default 2), TASKROW_BENCH_TARGETS (labels; default every server).
const JOBS = Number(process.env['TASKROW_BENCH_LIMIT_JOBS'] ?? 20_000);
const RUNS = Number(process.env['TASKROW_BENCH_RUNS'] ?? 3);
const CONSUMERS = Number(process.env['TASKROW_BENCH_LIMIT_CONSUMERS'] ?? 10);
const ONLY = process.env['TASKROW_BENCH_TARGETS']?.split(',').map((s) => s.trim());
const KEYS = Number(process.env['TASKROW_BENCH_LIMIT_KEYS'] ?? 20);
const LIMIT = Number(process.env['TASKROW_BENCH_LIMIT'] ?? 2);
const CAP_SECONDS = 120;

const payload = (): { d: string; e: string } => ({ d: letters(), e: letters() });

for (const target of targets().filter((t) => !ONLY || ONLY.includes(label(t)))) {
  describe(`limits bench · ${label(target)}`, () => {
    it(`drain ${JOBS} jobs, ${CONSUMERS} consumers: ${KEYS} keys limited to ${LIMIT} running each vs no keys`, async () => {
      const server = await describeServer(target);
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 4 });
      const prefix = `lbench${process.pid}_`;
      const tr = await taskrow(pool, { prefix });
      await tr.migrate();
      const limited: number[] = [];
      const free: number[] = [];
      try {
        for (let run = 0; run < RUNS; run++) {
          for (const keyed of [false, true]) {
            const name = `${keyed ? 'keyed' : 'free'}${run}`;
            const q = tr.queue(name);
            if (keyed) await q.setConcurrencyLimit(LIMIT);
            for (let i = 0; i < JOBS; i += 1000) {
              await q.enqueueMany(Array.from({ length: Math.min(1000, JOBS - i) }, (_, j) => ({ payload: payload(), ...(keyed ? { concurrencyKey: `k${(i + j) % KEYS}` } : {}) })));
            }
            const r = await taskrowDrain(target.url, prefix, name, CONSUMERS, JOBS, CAP_SECONDS);
            if (r.errors.length > 0) throw new Error(`workers reported errors: ${String(r.errors[0])}`);
            (keyed ? limited : free).push(r.rate);
          }
        }
        report(`Queue drain with per-key concurrency limits (${CONSUMERS} consumers, concurrency and batch 100)`, server, [
          { scenario: `drain ${JOBS.toLocaleString('en-US')} jobs over ${KEYS} keys, limit ${LIMIT} each (baseline: the same drain without keys)`, taskrow: median(limited), baseline: median(free), unit: 'ops/s' },
        ], [`medians of ${RUNS} runs; keyed runs ${limited.map((r) => Math.round(r)).join(', ')}/s, unkeyed ${free.map((r) => Math.round(r)).join(', ')}/s`]);
      } finally {
        await dropPrefixed(pool, prefix);
        await pool.end();
      }
    });
  });
}
