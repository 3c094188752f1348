import mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import type { Taskrow } from '@taskrow/core';
import { dropPrefix } from '@taskrow/core/conformance';
import { taskrow as knexTaskrow } from '@taskrow/knex';
import { taskrow as kyselyTaskrow } from '@taskrow/kysely';
import { taskrow as mariadbTaskrow } from '@taskrow/mariadb';
import { taskrow as mysql2Taskrow } from '@taskrow/mysql2';
import type { ServerTarget } from '@taskrow/servers';
import { knexFor } from '../src/harnesses/knex.js';
import { kyselyFor } from '../src/harnesses/kysely.js';
import { mariadbConfig } from '../src/harnesses/mariadb.js';
import { mysql2Probe } from '../src/harnesses/mysql2.js';
import { label, targets } from '../src/targets.js';
import { describeServer, median, report, type BenchRow } from './lib.js';

// The same work through each adapter, as a ratio to @taskrow/mysql2 (goal: every adapter within
// 15%, ratio >= 0.85). One server: TASKROW_BENCH_SERVER ("mysql 9.7", "mariadb 11.8", ...; default
// the first MySQL). Scale: TASKROW_BENCH_ADAPTER_KEYS (default 200,000), TASKROW_BENCH_ADAPTER_JOBS
// (default 50,000), TASKROW_BENCH_RUNS (default 5). Every client is a pool of POOL connections.
const KEYS = Number(process.env['TASKROW_BENCH_ADAPTER_KEYS'] ?? 200_000);
const JOBS = Number(process.env['TASKROW_BENCH_ADAPTER_JOBS'] ?? 50_000);
const RUNS = Number(process.env['TASKROW_BENCH_RUNS'] ?? 5);
const POOL = 8;
const CLAIMERS = 4;
const CLAIM_BATCH = 100;

interface Opened {
  readonly tr: Taskrow<unknown>;
  end(): Promise<void>;
}

/** How each adapter is opened over a pool of POOL connections, the way an application would. */
const ADAPTERS: Readonly<Record<string, (url: string, prefix: string) => Promise<Opened>>> = {
  async mysql2(url, prefix) {
    const pool = mysql.createPool({ uri: url, connectionLimit: POOL });
    return { tr: (await mysql2Taskrow(pool, { prefix })) as Taskrow<unknown>, end: () => pool.end() };
  },
  async mariadb(url, prefix) {
    const pool = mariadb.createPool(`${mariadbConfig({ url } as ServerTarget)}&connectionLimit=${POOL}`);
    return { tr: (await mariadbTaskrow(pool, { prefix })) as Taskrow<unknown>, end: () => pool.end() };
  },
  async knex(url, prefix) {
    const db = knexFor(url, POOL);
    return { tr: (await knexTaskrow(db, { prefix })) as Taskrow<unknown>, end: () => db.destroy() };
  },
  async kysely(url, prefix) {
    const { db } = kyselyFor(url, POOL);
    return { tr: (await kyselyTaskrow(db, { prefix })) as Taskrow<unknown>, end: () => db.destroy() };
  },
};
const NAMES = Object.keys(ADAPTERS);

const keyOf = (i: number): string => `job-${String(i).padStart(8, '0')}/chunk.out`;

async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** The scenarios; each returns its rate (units per second) for one run through `tr`. */
const SCENARIOS: readonly { name: string; run(tr: Taskrow<unknown>, tag: string, keys: readonly string[]): Promise<number> }[] = [
  {
    name: `Dones mark ${KEYS.toLocaleString('en-US')} keys, one call`,
    run: async (tr, tag, keys) => KEYS / (await seconds(() => tr.dones(`m${tag}`).mark(keys))),
  },
  {
    name: `Dones pending over ${KEYS.toLocaleString('en-US')} candidates, half done`,
    async run(tr, tag, keys) {
      const d = tr.dones(`p${tag}`);
      await d.mark(keys.filter((_, i) => i % 2 === 0));
      let n = 0;
      const s = await seconds(async () => {
        for await (const _ of d.pending(keys)) n += 1;
      });
      if (n !== Math.floor(KEYS / 2)) throw new Error(`pending yielded ${n}, expected ${Math.floor(KEYS / 2)}`);
      return KEYS / s;
    },
  },
  {
    name: `Queue enqueue ${JOBS.toLocaleString('en-US')} jobs, 1,000 per call`,
    async run(tr, tag) {
      const q = tr.queue(`q${tag}`);
      return (
        JOBS /
        (await seconds(async () => {
          for (let i = 0; i < JOBS; i += 1000) await q.enqueueMany(Array.from({ length: Math.min(1000, JOBS - i) }, (_, j) => ({ payload: { n: i + j } })));
        }))
      );
    },
  },
  {
    name: `Queue claim + complete ${JOBS.toLocaleString('en-US')} jobs, ${CLAIMERS} claimers x ${CLAIM_BATCH}`,
    async run(tr, tag) {
      const q = tr.queue(`q${tag}`); // filled by the enqueue scenario of the same run
      let done = 0;
      const deadline = Date.now() + 300_000;
      const s = await seconds(() =>
        Promise.all(
          Array.from({ length: CLAIMERS }, async () => {
            while (done < JOBS) {
              const jobs = await q.claim({ limit: CLAIM_BATCH, lease: 120_000 });
              if (jobs.length === 0) {
                // Every runnable row was locked by another claimer (SKIP LOCKED): look again, unless jobs went missing.
                if (Date.now() > deadline) throw new Error(`claimed and completed ${done} of ${JOBS} jobs before the deadline`);
                await new Promise((r) => setTimeout(r, 1));
                continue;
              }
              await q.complete(jobs);
              done += jobs.length;
            }
          }),
        ),
      );
      if (done !== JOBS) throw new Error(`claimed and completed ${done} of ${JOBS} jobs`);
      return JOBS / s;
    },
  },
];

function pickServer(list: readonly ServerTarget[]): ServerTarget {
  const want = process.env['TASKROW_BENCH_SERVER'];
  const found = want ? list.find((t) => label(t) === want) : (list.find((t) => t.engine === 'mysql') ?? list[0]);
  if (!found) throw new Error(`no server ${JSON.stringify(want)} among ${list.map(label).join(', ')}`);
  return found;
}

const target = pickServer(targets());
describe(`adapters bench · ${label(target)}`, () => {
  it(`${NAMES.join(', ')}: the same Dones and Queue work, median of ${RUNS} runs, ratio to mysql2`, async () => {
    const server = await describeServer(target);
    const prefix = `benchad${process.pid}_`;
    const opened: Record<string, Opened> = {};
    for (const name of NAMES) opened[name] = await ADAPTERS[name]!(target.url, prefix);
    await opened['mysql2']!.tr.migrate();
    const keys = Array.from({ length: KEYS }, (_, i) => keyOf(i));
    const rates: Record<string, number[]> = {};
    try {
      for (let run = 0; run < RUNS; run++) {
        // Rotate the order every run so that drift on a shared machine does not favour one adapter.
        const order = NAMES.map((_, i) => NAMES[(i + run) % NAMES.length]!);
        for (const name of order) {
          for (const [i, sc] of SCENARIOS.entries()) {
            (rates[`${i}|${name}`] ??= []).push(await sc.run(opened[name]!.tr, `${name}${run}`, keys));
          }
        }
      }
      const rows: BenchRow[] = [];
      const absolute: string[] = [];
      for (const [i, sc] of SCENARIOS.entries()) {
        const base = median(rates[`${i}|mysql2`]!);
        absolute.push(`${sc.name}: mysql2 ${Math.round(base).toLocaleString('en-US')}/s`);
        for (const name of NAMES.filter((n) => n !== 'mysql2')) {
          rows.push({ scenario: `${sc.name} · ${name}`, taskrow: median(rates[`${i}|${name}`]!), baseline: base, unit: 'ops/s' });
        }
      }
      report(`Adapter overhead: each adapter against @taskrow/mysql2 (${label(target)})`, server, rows, [
        'columns: "taskrow" is the adapter named in the row, "baseline" is @taskrow/mysql2 doing the same work; ratio = adapter / mysql2 (goal >= 0.85)',
        `medians of ${RUNS} runs, adapter order rotated every run; each adapter on a pool of ${POOL} connections; Dones marks in batches of 2,000, pending with 3 lookups in flight`,
        ...absolute,
      ]);
    } finally {
      await Promise.allSettled(Object.values(opened).map((o) => o.end()));
      const probe = await mysql2Probe(target.url);
      await dropPrefix(probe, prefix);
      await probe.end();
    }
  });
});
