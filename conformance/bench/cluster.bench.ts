import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import { startCluster, type ClusterHandle, type ClusterKind, type ServerTarget } from '@taskrow/servers';
import { label, targets } from '../src/targets.js';
import { primitiveRates, type PrimitiveRates } from './cluster-primitives.js';
import { cleanUp, describeServer, median } from './lib.js';
import { letters } from './queue-baseline.js';
import { fillQueue, taskrowDrain, type DrainResult } from './queue-taskrow.js';

// Queue on clusters beside the single server of the same build, same machine, same run: drain a full
// queue with 10 consumers, and Köhntopp's 2 producers + 10 consumers, with the clients spread over
// the three nodes (every node a primary on Galera and multi-primary Group Replication); then Dones
// mark / pending and Loop get -> did likewise (cluster-primitives.ts). Counts the
// certification conflicts the nodes report (taskrow retries them as deadlocks) and the errors the
// workers saw. `pnpm bench cluster`. Scale: TASKROW_BENCH_CLUSTER_JOBS (default 20,000),
// TASKROW_BENCH_RUNS (default 3), TASKROW_BENCH_MAX_SECONDS (cap of one run, default 60),
// TASKROW_BENCH_CLUSTERS (default galera,group-replication).
const JOBS = Number(process.env['TASKROW_BENCH_CLUSTER_JOBS'] ?? 20_000);
const RUNS = Number(process.env['TASKROW_BENCH_RUNS'] ?? 3);
const CAP = Number(process.env['TASKROW_BENCH_MAX_SECONDS'] ?? 60);
const KINDS = (process.env['TASKROW_BENCH_CLUSTERS'] ?? 'galera,group-replication').split(',').map((s) => s.trim()) as ClusterKind[];
const CONSUMERS = 10;
const PRODUCERS = 2;
const payload = (): { d: string; e: string } => ({ d: letters(), e: letters() });

/** Certification conflicts all nodes report: Galera's cert failures + brute-force aborts, Group Replication's conflicts detected. */
async function conflicts(urls: readonly string[], kind: ClusterKind): Promise<number> {
  let n = 0;
  for (const url of urls) {
    const conn = await mysql.createConnection(url);
    try {
      if (kind === 'galera') {
        const [rows] = await conn.query<mysql.RowDataPacket[]>(
          "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_cert_failures', 'wsrep_local_bf_aborts')",
        );
        n += rows.reduce((s, r) => s + Number(r['Value']), 0);
      } else {
        const [rows] = await conn.query<mysql.RowDataPacket[]>(
          'SELECT COUNT_CONFLICTS_DETECTED AS c FROM performance_schema.replication_group_member_stats WHERE MEMBER_ID = @@server_uuid',
        );
        n += Number(rows[0]?.['c'] ?? 0);
      }
    } finally {
      await conn.end();
    }
  }
  return n;
}

interface Measured {
  drain: DrainResult[];
  mixed: DrainResult[];
  primitives: PrimitiveRates | undefined;
  conflicts: number;
}

/** Drain and produce+drain `RUNS` times on `urls` (one URL: a single server). */
async function measure(urls: readonly string[], kind: ClusterKind | undefined): Promise<Measured> {
  const prefix = `cbench${process.pid}_`;
  const pool = mysql.createPool({ uri: urls[0]!, connectionLimit: 4 });
  const out: Measured = { drain: [], mixed: [], primitives: undefined, conflicts: 0 };
  try {
    const tr = await taskrow(pool, { prefix });
    await tr.migrate();
    const c0 = kind ? await conflicts(urls, kind) : 0;
    for (let run = 0; run < RUNS; run++) {
      await fillQueue(tr.queue(`drain${run}`), JOBS, payload);
      out.drain.push(await taskrowDrain(urls, prefix, `drain${run}`, CONSUMERS, JOBS, CAP));
      out.mixed.push(await taskrowDrain(urls, prefix, `mixed${run}`, CONSUMERS, JOBS, CAP, { producers: PRODUCERS, perCommit: 10, payload }));
    }
    out.primitives = await primitiveRates(urls, prefix, RUNS);
    out.conflicts = kind ? (await conflicts(urls, kind)) - c0 : 0;
    return out;
  } finally {
    await cleanUp(pool, prefix);
    await pool.end();
  }
}

const rate = (rs: readonly DrainResult[]): number => median(rs.map((r) => r.rate));
const errors = (rs: readonly DrainResult[]): string => {
  const codes = new Map<string, number>();
  for (const e of rs.flatMap((r) => r.errors)) {
    const k = `${(e as { code?: string }).code ?? 'unknown'}${(e as { errno?: number }).errno ? ` (${(e as { errno?: number }).errno})` : ''}`;
    codes.set(k, (codes.get(k) ?? 0) + 1);
  }
  return [...codes].map(([k, n]) => `${k} ×${n}`).join(', ') || 'none';
};

/** Table rows of the Dones and Loop figures, cluster beside single server. */
function primitiveRows(c: PrimitiveRates, s: PrimitiveRates, fmt: (v: number) => string): string[] {
  const line = (what: string, k: keyof PrimitiveRates): string => `| ${what} | ${fmt(c[k])} | ${fmt(s[k])} | ${(c[k] / s[k]).toFixed(2)}x | |`;
  return [
    line('Dones mark, keys/s (3 clients, disjoint keys)', 'mark'),
    line('Dones mark, marks/s (30 clients, every key marked by two)', 'overlapping'),
    line('Dones pending, candidates/s (3 clients, half done)', 'pending'),
    line('Loop get(100) -> did, ids/s (12 workers)', 'loop'),
  ];
}

function single(kind: ClusterKind): ServerTarget {
  const want = kind === 'galera' ? 'mariadb 10.11' : 'mysql 9.7';
  const t = targets().find((x) => label(x) === want);
  if (!t) throw new Error(`the cluster bench compares with a single ${want}, which this run did not start`);
  return t;
}

for (const kind of KINDS) {
  describe(`cluster bench · ${kind}`, () => {
    it(`drain ${JOBS.toLocaleString('en-US')} jobs with ${CONSUMERS} consumers, and ${PRODUCERS} producers + ${CONSUMERS} consumers: 3 nodes beside one server`, async () => {
      const one = single(kind);
      const server = await describeServer(one);
      const alone = await measure([one.url], undefined);
      let cluster: ClusterHandle | undefined;
      try {
        cluster = await startCluster({ kind });
        const nodes = await measure(cluster.urls, kind);
        const fmt = (v: number): string => `${Math.round(v).toLocaleString('en-US')}/s`;
        const row = (what: string, c: readonly DrainResult[], s: readonly DrainResult[]): string =>
          `| ${what} | ${fmt(rate(c))} | ${fmt(rate(s))} | ${(rate(c) / rate(s)).toFixed(2)}x | ${c.some((r) => r.capped) ? `capped at ${CAP} s` : ''} |`;
        process.stdout.write(
          `${[
            `\n## Queue on a 3-node ${kind} cluster beside one ${label(one)} (${cluster.versionString}), ${RUNS} run(s), median`,
            `settings (single server; nodes use the same flags): ${server.durability}`,
            `clients: ${CONSUMERS} consumers (taskrow workers, concurrency and batch 100) and ${PRODUCERS} producers (10 jobs a commit), connection i on node i mod 3`,
            '| scenario | cluster | single server | cluster / single | |',
            '| --- | --- | --- | --- | --- |',
            row(`drain ${JOBS.toLocaleString('en-US')} queued jobs, ${CONSUMERS} consumers`, nodes.drain, alone.drain),
            row(`${PRODUCERS} producers + ${CONSUMERS} consumers, ${JOBS.toLocaleString('en-US')} jobs`, nodes.mixed, alone.mixed),
            ...primitiveRows(nodes.primitives!, alone.primitives!, fmt),
            `certification conflicts reported by the nodes: ${nodes.conflicts}; worker/producer errors on the cluster: ${errors([...nodes.drain, ...nodes.mixed])}; on the single server: ${errors([...alone.drain, ...alone.mixed])}`,
          ].join('\n')}\n`,
        );
      } finally {
        await cluster?.stop();
      }
    });
  });
}
