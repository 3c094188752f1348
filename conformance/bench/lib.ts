import { cpus, release } from 'node:os';
import mysql from 'mysql2/promise';
import type { ServerTarget } from '@taskrow/servers';

/**
 * The machine a figure was measured on: CPU model, core count, kernel and Node.js. Ratios against
 * a peer move with the processor (BullMQ on Redis gained more than taskrow did from one 2-core
 * machine to a faster one), so every report names it.
 */
export function machineLine(): string {
  const list = cpus();
  const model = list[0]?.model.trim() || 'unknown CPU';
  return `${model}, ${list.length} cores, Linux ${release()}, Node.js ${process.version}`;
}

/** Engine, version and the durability settings a figure was measured with. */
export interface BenchServer {
  readonly label: string;
  readonly durability: string;
}

/** Reads the settings every benchmark prints beside its figures. */
export async function describeServer(target: ServerTarget): Promise<BenchServer> {
  const conn = await mysql.createConnection(target.url);
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>(
      'SELECT @@innodb_flush_log_at_trx_commit AS f, @@sync_binlog AS s, @@innodb_doublewrite AS d, @@log_bin AS b, @@innodb_buffer_pool_size AS p, @@performance_schema AS ps',
    );
    const r = rows[0]!;
    return {
      label: `${target.engine} ${target.versionString}`,
      durability: `innodb_flush_log_at_trx_commit=${r['f']} sync_binlog=${r['s']} innodb_doublewrite=${r['d']} log_bin=${r['b']} buffer_pool=${Math.round(Number(r['p']) / 2 ** 20)}M performance_schema=${r['ps']}`,
    };
  } finally {
    await conn.end();
  }
}

/** The median of `xs`. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Part `i` of `total` split over `parts` as evenly as whole numbers allow (the first `total % parts` get one more). */
export function shareOf(total: number, parts: number, i: number): number {
  return Math.floor(total / parts) + (i < total % parts ? 1 : 0);
}

/** Runs `fn` `runs` times (after `setup` each time) and returns the median seconds. */
export async function medianSeconds(runs: number, fn: () => Promise<void>, setup?: () => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (setup) await setup();
    const t0 = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return median(times);
}

/** Runs `n` async tasks with at most `width` in flight. */
export async function inParallel(n: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

/** One row of a printed comparison: taskrow against the bare-driver baseline doing the same work. */
export interface BenchRow {
  readonly scenario: string;
  /** Units per second, or seconds, as `unit` says. */
  readonly taskrow: number;
  readonly baseline: number;
  readonly unit: 'ops/s' | 's';
}

/**
 * Prints a comparison table with the server, durability settings and the ratio (taskrow speed over
 * baseline speed: above 1.0 means taskrow is faster), and returns the text for closing notes.
 */
export function report(title: string, server: BenchServer, rows: readonly BenchRow[], notes: readonly string[] = []): string {
  const ratio = (r: BenchRow): number => (r.unit === 's' ? r.baseline / r.taskrow : r.taskrow / r.baseline);
  const fmt = (v: number, unit: string): string => (unit === 's' ? `${v.toFixed(3)} s` : `${Math.round(v).toLocaleString('en-US')}/s`);
  const lines = [
    `\n## ${title}`,
    `server: ${server.label}`,
    `settings: ${server.durability}`,
    `machine: ${machineLine()}`,
    '| scenario | taskrow | baseline | ratio |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.scenario} | ${fmt(r.taskrow, r.unit)} | ${fmt(r.baseline, r.unit)} | ${ratio(r).toFixed(2)}x |`),
    ...notes.map((n) => `note: ${n}`),
  ];
  const text = lines.join('\n');
  process.stdout.write(`${text}\n`);
  return text;
}

/** Drops every table whose name starts with `prefix` (a benchmark's own tables). */
async function dropPrefixed(pool: mysql.Pool, prefix: string): Promise<void> {
  const [rows] = await pool.query<mysql.RowDataPacket[]>(
    'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
    [`${prefix.replace(/_/g, '\\_')}%`],
  );
  for (const r of rows) await pool.query(`DROP TABLE IF EXISTS \`${String(r['t'])}\``);
}

/**
 * `dropPrefixed` for a benchmark's `finally`: a failure is written to stderr, never thrown, so it
 * does not hide the error that ended the benchmark (a server that went away fails both).
 */
export async function cleanUp(pool: mysql.Pool, prefix: string): Promise<void> {
  await dropPrefixed(pool, prefix).catch((err: unknown) => void process.stderr.write(`taskrow bench: dropping the ${prefix} tables failed: ${String(err)}\n`));
}
