import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import type { Taskrow } from '@taskrow/core';
import { targets, label } from '../src/targets.js';
import { cleanUp, describeServer, median, report, shareOf, type BenchRow, type BenchServer } from './lib.js';
import { BASELINE_DDL, baselineConnection, baselineConsumer, baselineProducer, fillBaseline, letters, type BaselineCounts } from './queue-baseline.js';
import { bullmqDrain, bullmqMixed, DURABLE, startRedis, type LocalRedis } from './queue-bullmq.js';
import { floorDrain } from './queue-floor.js';
import { digestsCollected, profileLines, profileRun } from './statement-profile.js';
import { fillKept, fillQueue, serverDeadlocks, taskrowClaimLoop, taskrowDrain, taskrowProduce, underReadView } from './queue-taskrow.js';
import { cpuPerJob, workLine, workProbe, type WorkPerJob } from './work.js';

// Queue: Köhntopp's scenario (2 producers, 10 consumers, trivial jobs, batches of 100) against his
// exact statements through bare mysql2; the drain scaling curve, also against the floor (the least
// work the schema can do per job, see queue-floor.ts), with claim and ack latency; claim cost with
// kept finished jobs; BullMQ on a local Redis draining the same jobs with the same consumer
// counts and concurrency, and in the same produce + drain scenario, each of its runs taken in turn
// with taskrow's (so a machine whose speed drifts during the hour weighs on both alike); the
// producers alone, which bound the produce + drain figure.
// Scale: TASKROW_BENCH_QUEUE_JOBS (default 100,000), TASKROW_BENCH_RUNS (default 3),
// TASKROW_BENCH_CONSUMERS (default "1,4,10,32"), TASKROW_BENCH_MAX_SECONDS (cap of one run,
// default 30: a slower run reports its rate over the jobs it did), TASKROW_BENCH_KEPT (default
// 1,000,000), TASKROW_BENCH_CLAIM_JOBS (default 20,000), TASKROW_BENCH_BULLMQ (0 skips it),
// TASKROW_BENCH_TARGETS (comma-separated labels such as "mariadb 10.11"; default every server),
// TASKROW_BENCH_DURABILITY=full (durable servers and BullMQ with appendfsync everysec),
// TASKROW_BENCH_PROFILE=1 (servers with performance_schema on, and each job's server time broken
// down by statement for a 1-consumer drain and a produce + drain run).
const JOBS = Number(process.env['TASKROW_BENCH_QUEUE_JOBS'] ?? 100_000);
const RUNS = Number(process.env['TASKROW_BENCH_RUNS'] ?? 3);
const CONSUMERS = (process.env['TASKROW_BENCH_CONSUMERS'] ?? '1,4,10,32').split(',').map(Number);
const CAP = Number(process.env['TASKROW_BENCH_MAX_SECONDS'] ?? 30);
const KEPT = Number(process.env['TASKROW_BENCH_KEPT'] ?? 1_000_000);
const CLAIM_JOBS = Number(process.env['TASKROW_BENCH_CLAIM_JOBS'] ?? 20_000);
const BULLMQ = process.env['TASKROW_BENCH_BULLMQ'] !== '0';
const PROFILE = process.env['TASKROW_BENCH_PROFILE'] === '1';
const ONLY = process.env['TASKROW_BENCH_TARGETS']?.split(',').map((s) => s.trim());
const BATCH = 100;
const PRODUCERS = 2;
const MIXED_CONSUMERS = 10;
const payload = (): { d: string; e: string } => ({ d: letters(), e: letters() });
const PRODUCE = { producers: PRODUCERS, perCommit: 10, payload };

const fmt = (n: number): string => n.toLocaleString('en-US');

/** One timed drain: jobs done over seconds; `capped` when the run hit the time cap first. */
interface Rate {
  readonly rate: number;
  readonly capped: boolean;
}
const rateOf = (runs: readonly Rate[]): number => median(runs.map((r) => r.rate));
const cappedNote = (what: string, runs: readonly Rate[]): string[] =>
  runs.some((r) => r.capped) ? [`${what}: stopped at the ${CAP} s cap; the rate is over the jobs done by then`] : [];

for (const target of targets().filter((t) => !ONLY || ONLY.includes(label(t)))) {
  describe(`queue bench · ${label(target)}`, () => {
    it(`drain ${fmt(JOBS)} jobs with ${CONSUMERS.join('/')} consumers, ${PRODUCERS} producers + ${MIXED_CONSUMERS} consumers, claim cost with ${fmt(KEPT)} kept jobs`, async () => {
      const server = await describeServer(target);
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 8 });
      const prefix = `qbench${process.pid}_`;
      const base = `\`${prefix}koehntopp_jobs\``;
      const tr: Taskrow = await taskrow(pool, { prefix });
      await tr.migrate();
      const probe = await workProbe(pool);
      const notes: string[] = [];
      const redis = BULLMQ ? await startRedis() : undefined;
      const bull = { drains: new Map<number, number>(), mixed: [] as number[] };
      try {
        // 1. Drain a full queue: the scaling curve.
        const curve: BenchRow[] = [];
        const drains = new Map<number, number>();
        const floorRows: BenchRow[] = [];
        const latency: string[] = [];
        const perJob: string[] = [];
        const drainWork = new Map<number, WorkPerJob[]>();
        const at = new Map(
          CONSUMERS.map((c) => [
            c,
            {
              b: [] as Rate[],
              t: [] as Rate[],
              f: [] as Rate[],
              claimMs: [] as number[],
              ackMs: [] as number[],
              bull: [] as number[],
              work: [] as WorkPerJob[],
            },
          ]),
        );
        // The counts in turns, each round in the other order: no count always runs last, after the
        // most rows to purge and the longest drift of the machine.
        for (let run = 0; run < RUNS; run++) {
          for (const c of run % 2 === 0 ? CONSUMERS : [...CONSUMERS].reverse()) {
            const s = at.get(c)!;
            await pool.query(`DROP TABLE IF EXISTS ${base}`);
            await pool.query(BASELINE_DDL(base));
            await fillBaseline(pool, base, JOBS);
            s.b.push(await baselineDrain(target.url, base, c, JOBS));
            const name = `drain${c}r${run}`;
            await fillQueue(tr.queue(name), JOBS, payload);
            const r = await taskrowDrain(target.url, prefix, name, c, JOBS, CAP, undefined, BATCH, probe);
            if (r.errors.length > 0) throw new Error(`taskrow workers reported errors: ${String(r.errors[0])}`);
            s.t.push(r);
            if (r.work) s.work.push(r.work);
            s.claimMs.push(...r.claimMs);
            s.ackMs.push(...r.ackMs);
            await fillQueue(tr.queue(`floor${c}r${run}`), JOBS, payload);
            s.f.push(await floorDrain(target.url, prefix, `floor${c}r${run}`, c, CAP));
            if (redis) s.bull.push(await bullmqDrain(redis.port, JOBS, c, BATCH, payload));
          }
        }
        for (const c of CONSUMERS) {
          const { b, t, f, claimMs, ackMs, bull: bullSeconds, work } = at.get(c)!;
          if (redis) bull.drains.set(c, JOBS / median(bullSeconds));
          curve.push({ scenario: `drain ${fmt(JOBS)} queued jobs, ${c} consumer(s)`, taskrow: rateOf(t), baseline: rateOf(b), unit: 'ops/s' });
          floorRows.push({ scenario: `drain ${fmt(JOBS)} queued jobs, ${c} consumer(s)`, taskrow: rateOf(t), baseline: rateOf(f), unit: 'ops/s' });
          drains.set(c, rateOf(t));
          drainWork.set(c, work);
          perJob.push(`${c} consumer(s): ${workLine(work)}`);
          latency.push(
            `${c} consumer(s): claim of up to ${BATCH} p50 ${pct(claimMs, 0.5)} / p99 ${pct(claimMs, 0.99)} ms, completion batch p50 ${pct(ackMs, 0.5)} / p99 ${pct(ackMs, 0.99)} ms (${fmt(claimMs.length)} claims, ${fmt(ackMs.length)} batches)`,
          );
          notes.push(
            ...cappedNote(`baseline, ${c} consumer(s)`, b),
            ...cappedNote(`taskrow, ${c} consumer(s)`, t),
            ...cappedNote(`floor, ${c} consumer(s)`, f),
          );
        }

        // 2. Köhntopp's scenario: producers insert while consumers drain.
        const mixB: Rate[] = [];
        const mixT: Rate[] = [];
        const prodB: Rate[] = [];
        const prodT: Rate[] = [];
        const mixWork: WorkPerJob[] = [];
        const deadlocks = { baselineSeen: 0, baselineConflicts: 0, baselineServer: 0, taskrowErrors: 0, taskrowServer: 0 };
        for (let run = 0; run < RUNS; run++) {
          await pool.query(`DROP TABLE IF EXISTS ${base}`);
          await pool.query(BASELINE_DDL(base));
          const d0 = await serverDeadlocks(pool);
          const mb = await baselineMixed(target.url, base, JOBS);
          deadlocks.baselineServer += (await serverDeadlocks(pool)) - d0;
          deadlocks.baselineSeen += mb.deadlocks;
          deadlocks.baselineConflicts += mb.conflicts ?? 0;
          mixB.push(mb);
          const d1 = await serverDeadlocks(pool);
          const mt = await taskrowDrain(target.url, prefix, `mixed${run}`, MIXED_CONSUMERS, JOBS, CAP, PRODUCE, BATCH, probe);
          if (mt.work) mixWork.push(mt.work);
          deadlocks.taskrowServer += (await serverDeadlocks(pool)) - d1;
          deadlocks.taskrowErrors += mt.errors.length;
          mixT.push(mt);
          if (redis)
            bull.mixed.push(
              JOBS / (await bullmqMixed(redis.port, JOBS, { workers: MIXED_CONSUMERS, concurrency: BATCH, producers: PRODUCERS, perCall: 10 }, payload)),
            );
          // The producers alone: what the produce + drain figure is bounded by.
          await pool.query(`DROP TABLE IF EXISTS ${base}`);
          await pool.query(BASELINE_DDL(base));
          prodB.push(await baselineProduce(target.url, base, JOBS));
          const pt = await taskrowProduce(target.url, prefix, `produce${run}`, JOBS, CAP, PRODUCE);
          if (pt.errors.length > 0) throw new Error(`taskrow producers reported errors: ${String(pt.errors[0])}`);
          prodT.push(pt);
        }
        const mixed = `${PRODUCERS} producers (10 jobs per commit) + ${MIXED_CONSUMERS} consumers, ${fmt(JOBS)} jobs`;
        curve.push({ scenario: mixed, taskrow: rateOf(mixT), baseline: rateOf(mixB), unit: 'ops/s' });
        curve.push({
          scenario: `${PRODUCERS} producers alone (10 jobs per commit), ${fmt(JOBS)} jobs enqueued`,
          taskrow: rateOf(prodT),
          baseline: rateOf(prodB),
          unit: 'ops/s',
        });
        notes.push(
          ...cappedNote('baseline, producers + consumers', mixB),
          ...cappedNote('taskrow, producers + consumers', mixT),
          ...cappedNote('baseline, producers alone', prodB),
          ...cappedNote('taskrow, producers alone', prodT),
          `deadlocks over ${RUNS} produce+drain runs: baseline callers retried ${deadlocks.baselineSeen} (server counted ${deadlocks.baselineServer}) and ${deadlocks.baselineConflicts} lock-wait or snapshot conflicts; ` +
            `taskrow: ${deadlocks.taskrowErrors} errors reached callers (server counted ${deadlocks.taskrowServer}, retried inside taskrow)`,
          `medians of ${RUNS} runs; every consumer has its own connection; taskrow consumers are queue.work() with concurrency ${BATCH}, batchSize ${BATCH}, lease 30 s, and share one taskrow instance with the producers, as one application process does`,
          `baseline: Köhntopp's statements (candidate SELECT on a random first letter of d, locking SELECT ... FOR UPDATE SKIP LOCKED by id, UPDATE, COMMIT, DELETE, COMMIT), autocommit off, REPEATABLE READ; producers insert one row per statement and commit every 10; taskrow producers enqueueMany() 10 jobs per call`,
        );
        report(`Queue vs Köhntopp's statements through bare mysql2 (${label(target)})`, server, curve, notes);
        const best = Math.max(...drains.values());
        const bestAt = [...drains].find(([, r]) => r === best)![0];
        report(`Queue drain vs the floor (${label(target)}): "baseline" = the floor`, server, floorRows, [
          'the floor: the same table, rows and indexes; per 100 jobs one UPDATE by primary key to running and one DELETE by primary key, autocommit, each consumer on its own ids (see bench/queue-floor.ts)',
          ...latency,
          `taskrow's work per job, medians of ${RUNS} runs (a rate that falls while these stay the same is not more work a job: the machine's speed, or waits for locks or the log's flushes): ${perJob.join('; ')}; produce + drain: ${workLine(mixWork)}`,
          `best drain ${fmt(Math.round(best))}/s at ${bestAt} consumer(s); ${[...drains].map(([c, r]) => `${c}: ${((r / best - 1) * 100).toFixed(0)}%`).join(', ')} from it`,
          `largest fall as consumers grow (each count against the best at or below it, the goal's measure): ${(fallAsConsumersGrow(drains) * 100).toFixed(0)}%`,
          `produce + drain: ${(rateOf(mixT) / best).toFixed(2)}x of the best drain-only figure`,
          producersBound(rateOf(mixT), rateOf(prodT), drains.get(MIXED_CONSUMERS)),
          ...cpuBound(mixWork, drainWork.get(MIXED_CONSUMERS)),
        ]);

        // 3. A long-open read view: the 10-consumer drain while another connection keeps one snapshot open.
        const viewed: Rate[] = [];
        let maxHistory = 0;
        for (let run = 0; run < RUNS; run++) {
          const name = `view${run}`;
          await fillQueue(tr.queue(name), JOBS, payload);
          const r = await underReadView(target.url, `\`${prefix}queue_jobs\``, () => taskrowDrain(target.url, prefix, name, MIXED_CONSUMERS, JOBS, CAP));
          if (r.result.errors.length > 0) throw new Error(`taskrow workers reported errors: ${String(r.result.errors[0])}`);
          viewed.push(r.result);
          maxHistory = Math.max(maxHistory, r.maxHistory);
        }
        report(
          `Queue drain under a long-open read view (${label(target)}): "baseline" = the same drain without it`,
          server,
          [
            {
              scenario: `drain ${fmt(JOBS)} queued jobs, ${MIXED_CONSUMERS} consumers, one REPEATABLE READ snapshot open throughout`,
              taskrow: rateOf(viewed),
              baseline: drains.get(MIXED_CONSUMERS) ?? NaN,
              unit: 'ops/s',
            },
          ],
          [
            `history list length reached ${fmt(maxHistory)} (SHOW ENGINE INNODB STATUS, sampled every 100 ms)`,
            ...cappedNote('taskrow under the read view', viewed),
          ],
        );

        // 4. Claim cost with kept finished jobs: the same claim+complete loop on a queue with 0 done
        // rows and on one with KEPT, each in its own jobs table (a second prefix) on the same server,
        // runs taken in turns so a drifting machine or the purge of earlier work weighs on both alike.
        const keptName = 'kept';
        const keptPrefix = `${prefix}kept_`;
        const keptTr: Taskrow = await taskrow(pool, { prefix: keptPrefix });
        await keptTr.migrate();
        const fillSeconds = await fillKept(pool, keptPrefix, keptName, KEPT);
        const queues = {
          empty: tr.queue(keptName, { keepFinishedFor: 365 * 24 * 3600 * 1000 }),
          full: keptTr.queue(keptName, { keepFinishedFor: 365 * 24 * 3600 * 1000 }),
        };
        const rates = { empty: [] as number[], full: [] as number[] };
        const claimMs = { empty: [] as number[], full: [] as number[] };
        for (let run = 0; run < RUNS; run++) {
          // Each run takes the sides in the other order: the first side of a run follows the fill (or the last run's delete).
          for (const side of run % 2 === 0 ? (['empty', 'full'] as const) : (['full', 'empty'] as const)) {
            await fillQueue(queues[side], CLAIM_JOBS, payload);
            const r = await taskrowClaimLoop(queues[side], CLAIM_JOBS, BATCH);
            rates[side].push(r.rate);
            claimMs[side].push(r.claimMs);
          }
          await pool.query(`DELETE FROM \`${prefix}queue_jobs\` WHERE queue = ?`, [keptName]);
        }
        report(
          `Queue claim cost with kept finished jobs (${label(target)}): "taskrow" = ${fmt(KEPT)} kept, "baseline" = 0 kept`,
          server,
          [
            {
              scenario: `claim ${BATCH} + complete, ${fmt(CLAIM_JOBS)} jobs, 1 consumer`,
              taskrow: median(rates.full),
              baseline: median(rates.empty),
              unit: 'ops/s',
            },
          ],
          [
            `median claim() of ${BATCH}: ${median(claimMs.empty).toFixed(2)} ms with 0 kept, ${median(claimMs.full).toFixed(2)} ms with ${fmt(KEPT)} kept (state done, keepFinishedFor one year; two jobs tables on the same server, runs in turns, each run in the other order)`,
            `inserting the ${fmt(KEPT)} kept rows took ${fillSeconds.toFixed(0)} s (untimed)`,
          ],
        );

        // 5. BullMQ on a local Redis: the same jobs, consumer counts and concurrency, and the
        // produce + drain scenario, measured in turns with taskrow's runs above.
        if (redis) {
          report(
            `Queue vs BullMQ (${label(target)}): "baseline" = BullMQ`,
            server,
            [
              ...CONSUMERS.map((c) => ({
                scenario: `drain ${fmt(JOBS)} queued jobs, ${c} consumer(s) x concurrency ${BATCH}`,
                taskrow: drains.get(c)!,
                baseline: bull.drains.get(c)!,
                unit: 'ops/s' as const,
              })),
              { scenario: mixed, taskrow: rateOf(mixT), baseline: median(bull.mixed), unit: 'ops/s' },
            ],
            [bullmqNote(redis)],
          );
        } else if (BULLMQ) process.stdout.write('BullMQ skipped: no redis-server (Debian: apt-get install -y redis-server)\n');

        // 6. With TASKROW_BENCH_PROFILE=1: one drain and one produce + drain run broken down by statement.
        if (PROFILE) await profileRuns(pool, target.url, prefix, tr, server);
      } finally {
        await redis?.stop();
        await cleanUp(pool, prefix);
        await pool.end();
      }
    });
  });
}

/**
 * The largest fall of the drain rate as consumers grow: for each consumer count, its rate against
 * the best rate at that count or fewer; resolves to the lowest such ratio minus 1 (0 when the
 * curve never falls, -0.2 for a fall of 20% below an earlier best).
 */
function fallAsConsumersGrow(drains: ReadonlyMap<number, number>): number {
  let peak = 0;
  let worst = 0;
  for (const [, rate] of [...drains].sort(([a], [b]) => a - b)) {
    peak = Math.max(peak, rate);
    worst = Math.min(worst, rate / peak - 1);
  }
  return worst;
}

/** `consumers` of his consumer on their own connections, draining `total` prefilled jobs. */
async function baselineDrain(url: string, t: string, consumers: number, total: number): Promise<Rate & BaselineCounts> {
  const conns = await Promise.all(Array.from({ length: consumers }, () => baselineConnection(url)));
  const counts: BaselineCounts = { done: 0, deadlocks: 0 };
  const t0 = performance.now();
  await Promise.all(conns.map((c, i) => baselineConsumer(c, t, i + 1, total, t0 + CAP * 1000, counts)));
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(conns.map((c) => c.end()));
  return { rate: counts.done / seconds, capped: counts.done < total, ...counts };
}

/** His PRODUCERS producers on `conns`, inserting `total` rows between them until `deadline`. */
function baselineProducers(conns: readonly mysql.Connection[], t: string, total: number, counts: BaselineCounts, deadline: number): Promise<unknown[]> {
  return Promise.all(conns.map((c, i) => baselineProducer(c, t, shareOf(total, conns.length, i), counts, deadline)));
}

/** His producers alone (no consumer): PRODUCERS connections inserting `total` rows, one per statement, a COMMIT every 10. */
async function baselineProduce(url: string, t: string, total: number): Promise<Rate> {
  const producers = await Promise.all(Array.from({ length: PRODUCERS }, () => baselineConnection(url)));
  const t0 = performance.now();
  await baselineProducers(producers, t, total, { done: 0, deadlocks: 0 }, t0 + CAP * 1000);
  const seconds = (performance.now() - t0) / 1000;
  const [rows] = await producers[0]!.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${t}`);
  await Promise.all(producers.map((c) => c.end()));
  const n = Number(rows[0]!['n']); // the rows that committed, counted by the table
  return { rate: n / seconds, capped: n < total };
}

/**
 * The note that reads produce + drain (`mixed`) against what bounds it: the producers alone
 * (`produced`), and both sides' work on one server, each job costing what it costs in the
 * producers-alone run and in the drain of as many consumers (`drained`): 1 / (1/produced + 1/drained).
 */
function producersBound(mixed: number, produced: number, drained: number | undefined): string {
  const both = drained === undefined ? NaN : 1 / (1 / produced + 1 / drained);
  return `produce + drain is ${(mixed / produced).toFixed(2)}x of the producers alone (${fmt(Math.round(produced))}/s) and ${(mixed / both).toFixed(2)}x of 1 / (1/producers alone + 1/drain at ${MIXED_CONSUMERS} consumers) = ${fmt(Math.round(both))}/s, the rate when one server does both sides' work at their own costs`;
}

/**
 * The note that reads produce + drain against the CPU it used: with the server and the clients on
 * one machine's cores, a job that costs N µs of CPU where the drain's cost M µs runs at most M / N
 * of the drain's rate once the cores are the limit.
 */
function cpuBound(mixed: readonly WorkPerJob[], drained: readonly WorkPerJob[] | undefined): string[] {
  const n = cpuPerJob(mixed);
  const m = drained && cpuPerJob(drained);
  if (n === undefined || m === undefined) return [];
  return [
    `produce + drain used ${n.toFixed(0)} µs of CPU a job (the server's and this process's) against ${m.toFixed(0)} µs in the drain at ${MIXED_CONSUMERS} consumers: where the cores are the limit it runs at most ${(m / n).toFixed(2)}x of that drain`,
  ];
}

/** His full scenario: PRODUCERS generators and MIXED_CONSUMERS consumers at once, until `total` jobs are done. */
async function baselineMixed(url: string, t: string, total: number): Promise<Rate & BaselineCounts> {
  const producers = await Promise.all(Array.from({ length: PRODUCERS }, () => baselineConnection(url)));
  const consumers = await Promise.all(Array.from({ length: MIXED_CONSUMERS }, () => baselineConnection(url)));
  const counts: BaselineCounts = { done: 0, deadlocks: 0 };
  const t0 = performance.now();
  const deadline = t0 + CAP * 1000;
  const produced = baselineProducers(producers, t, total, counts, deadline);
  await Promise.all([produced, ...consumers.map((c, i) => baselineConsumer(c, t, i + 1, total, deadline, counts))]);
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all([...producers, ...consumers].map((c) => c.end()));
  return { rate: counts.done / seconds, capped: counts.done < total, ...counts };
}

/** How BullMQ ran beside taskrow. */
function bullmqNote(redis: LocalRedis): string {
  return `BullMQ 5.81.5 on redis-server ${redis.version} (${DURABLE ? 'appendonly, appendfsync everysec' : 'no persistence'}, loopback), Workers x concurrency ${BATCH}, removeOnComplete; produce + drain: ${PRODUCERS} Queues addBulk 10 jobs per call; each run right after taskrow's run of the same scenario; medians of ${RUNS} runs`;
}

/** The `q` quantile of `xs` in ms, one decimal ('-' when empty). */
function pct(xs: readonly number[], q: number): string {
  if (xs.length === 0) return '-';
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
}

/**
 * Prints the server time per job, statement by statement, of one 1-consumer drain and one produce
 * + drain run (`TASKROW_BENCH_PROFILE=1`), or says why it cannot.
 */
async function profileRuns(pool: mysql.Pool, url: string, prefix: string, tr: Taskrow, server: BenchServer): Promise<void> {
  if (!(await digestsCollected(pool))) {
    process.stdout.write(`${server.label}: performance_schema collects no statement digests here; no statement profile\n`);
    return;
  }
  const [db] = await pool.query<mysql.RowDataPacket[]>('SELECT DATABASE() AS d');
  const schema = String(db[0]!['d']);
  const lines: string[] = [
    `Queue statement profile (${server.label}, ${server.durability}); performance_schema slows the server: take throughput from a run without it`,
  ];
  await fillQueue(tr.queue('profile1'), JOBS, payload);
  const drain = await profileRun(pool, url, schema, async () => (await taskrowDrain(url, prefix, 'profile1', 1, JOBS, CAP)).done);
  lines.push(...profileLines('drain of queued jobs, 1 consumer', drain));
  const mixed = await profileRun(pool, url, schema, async () => (await taskrowDrain(url, prefix, 'profileMixed', MIXED_CONSUMERS, JOBS, CAP, PRODUCE)).done);
  lines.push(...profileLines(`${PRODUCERS} producers (10 jobs per commit) + ${MIXED_CONSUMERS} consumers`, mixed));
  process.stdout.write(`\n${lines.join('\n')}\n`);
}
