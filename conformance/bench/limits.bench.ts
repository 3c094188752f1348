import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import { label, targets } from '../src/targets.js';
import { cleanUp, describeServer, median, report } from './lib.js';
import { letters } from './queue-baseline.js';
import { taskrowDrain } from './queue-taskrow.js';

// What a per-key concurrency limit costs a drain: the same jobs drained by the same workers, once
// with every job under one of KEYS concurrency keys limited to LIMIT running (admissions counted by
// the database), once without keys, and once without keys at KEYS x LIMIT jobs in flight. The
// baselines are taskrow's own drains.
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
// A limit of LIMIT per key caps the jobs in flight at KEYS x LIMIT however many consumers run: the
// `capped` drain runs that many without keys (spread over the consumers), so the keyed drain can be
// read both against the unlimited drain and against the same number of jobs in flight.
const CAPPED_PER_WORKER = Math.max(1, Math.round((KEYS * LIMIT) / CONSUMERS));
const VARIANTS = ['free', 'capped', 'keyed'] as const;
type Variant = (typeof VARIANTS)[number];

const payload = (): { d: string; e: string } => ({ d: letters(), e: letters() });

for (const target of targets().filter((t) => !ONLY || ONLY.includes(label(t)))) {
  describe(`limits bench · ${label(target)}`, () => {
    it(`drain ${JOBS} jobs, ${CONSUMERS} consumers: ${KEYS} keys limited to ${LIMIT} running each vs no keys`, async () => {
      const server = await describeServer(target);
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 4 });
      const prefix = `lbench${process.pid}_`;
      const tr = await taskrow(pool, { prefix });
      await tr.migrate();
      const rates: Record<Variant, number[]> = { free: [], capped: [], keyed: [] };
      try {
        for (let run = 0; run < RUNS; run++) {
          for (const variant of VARIANTS) {
            const name = `${variant}${run}`;
            const keyed = variant === 'keyed';
            const q = tr.queue(name);
            if (keyed) await q.setConcurrencyLimit(LIMIT);
            for (let i = 0; i < JOBS; i += 1000) {
              await q.enqueueMany(
                Array.from({ length: Math.min(1000, JOBS - i) }, (_, j) => ({
                  payload: payload(),
                  ...(keyed ? { concurrencyKey: `k${(i + j) % KEYS}` } : {}),
                })),
              );
            }
            const r = await taskrowDrain(target.url, prefix, name, CONSUMERS, JOBS, CAP_SECONDS, undefined, variant === 'capped' ? CAPPED_PER_WORKER : 100);
            if (r.errors.length > 0) throw new Error(`workers reported errors: ${String(r.errors[0])}`);
            rates[variant].push(r.rate);
          }
        }
        const runs = (v: Variant): string => rates[v].map((r) => Math.round(r)).join(', ');
        report(
          `Queue drain with per-key concurrency limits (${CONSUMERS} consumers)`,
          server,
          [
            {
              scenario: `drain ${JOBS.toLocaleString('en-US')} jobs over ${KEYS} keys, limit ${LIMIT} each (baseline: the same drain without keys, concurrency and batch 100)`,
              taskrow: median(rates.keyed),
              baseline: median(rates.free),
              unit: 'ops/s',
            },
            {
              scenario: `the same keyed drain (baseline: without keys, ${CAPPED_PER_WORKER} jobs in flight per consumer: the keys' ${KEYS * LIMIT} in all)`,
              taskrow: median(rates.keyed),
              baseline: median(rates.capped),
              unit: 'ops/s',
            },
          ],
          [
            `medians of ${RUNS} runs; keyed runs ${runs('keyed')}/s, unkeyed ${runs('free')}/s, unkeyed at ${CAPPED_PER_WORKER} per consumer ${runs('capped')}/s`,
          ],
        );
      } finally {
        await cleanUp(pool, prefix);
        await pool.end();
      }
    });
  });
}
