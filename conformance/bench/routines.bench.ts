import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import { label, targets } from '../src/targets.js';
import { cleanUp, describeServer } from './lib.js';
import { letters } from './queue-baseline.js';
import { fillQueue, taskrowClaimLoop, taskrowDrain, taskrowProduce } from './queue-taskrow.js';
import { measurePickup, now, pickupChild, quantile } from './pickup-child.js';
import { PROCEDURES, ProcedureSwitch, reportRoutines, runSides, type Comparison, type GroupRuns, type Measures, type Side } from './routines-ab.js';

// Stored procedures: each of the Queue's procedures against the path without it. For each, the
// workload it serves runs with every procedure installed and with that one dropped (DROP PROCEDURE
// after migrate(); the engine then goes statement by statement), the sides in turns, round after
// round, on one jobs table; plus every procedure against none for the drains. Workloads: single
// enqueues (1 producer, 1 job per call); enqueueMany of 10 (2 producers); enqueues while a worker
// of another process sleeps on the doorbell (pickup latency and the producer's rate), one job per
// call; an in-process worker picking up paced enqueues; produce + drain in one
// process (2 producers, 10 consumers); a drain of a filled queue at 10 consumers; one consumer's
// claim(100) + complete() loop. Scale: TASKROW_BENCH_RUNS (rounds, default 5),
// TASKROW_BENCH_ROUTINES_JOBS (jobs of a drain, produce + drain and enqueueMany run, default 10,000),
// TASKROW_BENCH_ROUTINES_ENQUEUES (single enqueues a run, default 3,000),
// TASKROW_BENCH_ROUTINES_CALLS (paced enqueue calls a pickup run, default 60, at 40 a second),
// TASKROW_BENCH_TARGETS (labels such as "mysql 9.7"; default every server).
const ROUNDS = Number(process.env['TASKROW_BENCH_RUNS'] ?? 5);
const JOBS = Number(process.env['TASKROW_BENCH_ROUTINES_JOBS'] ?? 10_000);
const ENQUEUES = Number(process.env['TASKROW_BENCH_ROUTINES_ENQUEUES'] ?? 3000);
const CALLS = Number(process.env['TASKROW_BENCH_ROUTINES_CALLS'] ?? 60);
const ONLY = process.env['TASKROW_BENCH_TARGETS']?.split(',').map((s) => s.trim());
const CALL_RATE = 40;
const CAP = 30;
const CONSUMERS = 10;
const BATCH = 100;
const payload = (): { d: string; e: string } => ({ d: letters(), e: letters() });
const fmt = (n: number): string => n.toLocaleString('en-US');

/** A side named by what it lacks. */
const side = (...drop: (typeof PROCEDURES)[number][]): Side => ({ name: drop.length === 0 ? 'all' : `-${drop.join(' -')}`, drop });
const ALL = side();
const NONE: Side = { name: 'none', drop: PROCEDURES };

/** A comparison of two sides' `metric`. */
const row = (procedure: string, workload: string, metric: string, unit: 'ops/s' | 'ms', w: Side, wo: Side): Comparison => ({
  procedure,
  workload,
  metric,
  unit,
  with: w.name,
  without: wo.name,
});

/** The pickup run's measures: median enqueue-to-start latency, and the producer's rate (jobs over the seconds its enqueue calls took). */
function pickupMeasures(latencies: readonly number[], callMs: readonly number[], perCall: number): Measures {
  return { 'pickup p50': quantile(latencies, 0.5), 'produce rate': (callMs.length * perCall * 1000) / callMs.reduce((s, v) => s + v, 0) };
}

for (const target of targets().filter((t) => !ONLY || ONLY.includes(label(t)))) {
  describe(`routines bench · ${label(target)}`, () => {
    it(`each stored procedure with and without, ${ROUNDS} rounds`, async () => {
      const t0 = performance.now();
      const server = await describeServer(target);
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 16 });
      const prefix = `rbench${process.pid}_`;
      const tr = await taskrow(pool, { prefix });
      const migrated = await tr.migrate();
      const procs = new ProcedureSwitch(pool, prefix, () => tr.migrate());
      const rows: [Comparison, GroupRuns][] = [];
      const notes: string[] = [];
      let runId = 0;
      const fresh = (): string => `r${runId++}`;
      try {
        // Enqueues, no worker anywhere: enqueue_job (1 job per call) and enqueue_jobs (10 per call).
        const noJob = side('enqueue_job');
        const single = await runSides(procs, ROUNDS, [ALL, noJob], async () => ({
          rate: (await taskrowProduce(target.url, prefix, fresh(), ENQUEUES, CAP, { producers: 1, perCommit: 1, payload })).rate,
        }));
        rows.push([row('enqueue_job', `${fmt(ENQUEUES)} single enqueues, 1 producer`, 'rate', 'ops/s', ALL, noJob), single]);
        const noJobs = side('enqueue_jobs');
        const many = await runSides(procs, ROUNDS, [ALL, noJobs], async () => ({
          rate: (await taskrowProduce(target.url, prefix, fresh(), JOBS, CAP, { producers: 2, perCommit: 10, payload })).rate,
        }));
        rows.push([row('enqueue_jobs', `${fmt(JOBS)} jobs by enqueueMany of 10, 2 producers`, 'rate', 'ops/s', ALL, noJobs), many]);

        // Enqueues while a worker of another process sleeps on the doorbell.
        const bell = await pickupChild({
          PICKUP_KIND: 'taskrow',
          PICKUP_URL: target.url,
          PICKUP_PREFIX: prefix,
          PICKUP_QUEUE: 'bell',
          PICKUP_POLL: '1000',
          PICKUP_DOORBELL: '1',
        });
        try {
          const paced = async (): Promise<Measures> => {
            const producer = await taskrow(pool, { prefix });
            const q = producer.queue<{ i: number }>('bell');
            bell.starts.clear();
            const r = await measurePickup((i) => q.enqueue({ i }), bell.starts, { jobs: CALLS, rate: CALL_RATE });
            await producer.close();
            return pickupMeasures(r.latencies, r.callMs, 1);
          };
          const noHand = side('enqueue_job_and_hand');
          const one = await runSides(procs, ROUNDS, [ALL, noHand], paced);
          const oneWork = `${CALLS} single enqueues at ${CALL_RATE}/s, worker asleep in another process`;
          for (const [m, unit] of [
            ['pickup p50', 'ms'],
            ['produce rate', 'ops/s'],
          ] as const) {
            rows.push([row('enqueue_job_and_hand', oneWork, m, unit, ALL, noHand), one]);
          }
        } finally {
          await bell.stop();
        }

        // A worker of the producer's own process: the local hand-off.
        const noLeased = side('enqueue_jobs_leased');
        const local = await runSides(procs, ROUNDS, [ALL, noLeased], async () => {
          const own = await taskrow(pool, { prefix });
          const name = fresh();
          const q = own.queue<{ i: number }>(name);
          const starts = new Map<number, number>();
          const w = q.work(async (job) => void starts.set(job.payload.i, now()), { concurrency: 4 });
          const r = await measurePickup((i) => q.enqueue({ i }), starts, { jobs: CALLS, rate: CALL_RATE });
          await w.stop();
          await own.close();
          return pickupMeasures(r.latencies, r.callMs, 1);
        });
        const localWork = `${CALLS} single enqueues at ${CALL_RATE}/s, worker idle in the same process`;
        rows.push([row('enqueue_jobs_leased', localWork, 'pickup p50', 'ms', ALL, noLeased), local]);
        rows.push([row('enqueue_jobs_leased', localWork, 'produce rate', 'ops/s', ALL, noLeased), local]);
        const mixed = await runSides(procs, ROUNDS, [ALL, noLeased, NONE], async () => {
          const r = await taskrowDrain(target.url, prefix, fresh(), CONSUMERS, JOBS, CAP, { producers: 2, perCommit: 10, payload }, BATCH);
          if (r.errors.length > 0) throw new Error(`taskrow reported errors: ${String(r.errors[0])}`);
          return { rate: r.rate };
        });
        const mixedWork = `2 producers (enqueueMany of 10) + ${CONSUMERS} consumers in one process, ${fmt(JOBS)} jobs`;
        rows.push([row('enqueue_jobs_leased', mixedWork, 'rate', 'ops/s', ALL, noLeased), mixed]);
        rows.push([row('all procedures against none', mixedWork, 'rate', 'ops/s', ALL, NONE), mixed]);

        // A drain of a filled queue, and one consumer's claim + complete loop.
        const noClaim = side('claim_jobs');
        const drain = await runSides(procs, ROUNDS, [ALL, noClaim, NONE], async () => {
          const name = fresh();
          await fillQueue(tr.queue(name), JOBS, payload);
          const r = await taskrowDrain(target.url, prefix, name, CONSUMERS, JOBS, CAP, undefined, BATCH);
          if (r.errors.length > 0) throw new Error(`taskrow workers reported errors: ${String(r.errors[0])}`);
          return { rate: r.rate };
        });
        const drainWork = `drain ${fmt(JOBS)} queued jobs, ${CONSUMERS} consumers`;
        for (const [p, s] of [
          ['claim_jobs', noClaim],
          ['all procedures against none', NONE],
        ] as const)
          rows.push([row(p, drainWork, 'rate', 'ops/s', ALL, s), drain]);
        const loop = await runSides(procs, ROUNDS, [ALL, noClaim], async () => {
          const own = await taskrow(pool, { prefix });
          const q = own.queue(fresh());
          await fillQueue(q, JOBS, payload);
          const r = await taskrowClaimLoop(q, JOBS, BATCH);
          await own.close();
          return { rate: r.rate, 'claim p50': r.claimMs };
        });
        const loopWork = `claim(${BATCH}) + complete(), 1 consumer, ${fmt(JOBS)} jobs`;
        rows.push([row('claim_jobs', loopWork, 'rate', 'ops/s', ALL, noClaim), loop]);
        rows.push([row('claim_jobs', loopWork, 'claim p50', 'ms', ALL, noClaim), loop]);

        notes.push(
          `migrate() installed ${migrated.routines.created.length + migrated.routines.replaced.length + migrated.routines.unchanged.length} procedures; refused: ${migrated.routines.refused.map((r) => r.name).join(', ') || 'none'}`,
          'a side lacks exactly the procedures its name lists (DROP PROCEDURE after migrate(); migrate() puts them back between sides); every run uses taskrow instances made after its side was set',
          `doorbell worker: queue.work() in another process, concurrency 4, doorbell: true, pollInterval 1 s; in-process worker: concurrency 4, default pollInterval; drains: queue.work() concurrency and batchSize ${BATCH}`,
          `produce rate of a pickup run: jobs over the seconds its paced enqueue calls took (1 / the mean call)`,
          `whole bench on this server: ${((performance.now() - t0) / 1000).toFixed(0)} s`,
        );
        reportRoutines(server, ROUNDS, rows, notes);
      } finally {
        await tr.close();
        for (const p of PROCEDURES) await pool.query(`DROP PROCEDURE IF EXISTS \`${prefix}${p}\``).catch(() => undefined);
        await cleanUp(pool, prefix);
        await pool.end();
      }
    });
  });
}
