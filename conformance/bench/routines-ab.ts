import type mysql from 'mysql2/promise';
import { machineLine, median, type BenchServer } from './lib.js';

// The A/B machinery of routines.bench.ts: a workload run on several sides, each side a set of the
// Queue's stored procedures dropped after migrate(), the sides taken in turns round after round.

/** The Queue's stored procedures, as named under a prefix (packages/core/src/queue/procedures.ts). */
export const PROCEDURES = ['enqueue_job', 'enqueue_jobs', 'enqueue_job_and_hand', 'enqueue_jobs_leased', 'claim_jobs'] as const;
export type Procedure = (typeof PROCEDURES)[number];

/** One side of a comparison: its name and the procedures dropped for it. */
export interface Side {
  readonly name: string;
  readonly drop: readonly Procedure[];
}

/** What one run measured: a value per metric. */
export type Measures = Record<string, number>;

/** Each side's runs, by side name, then by metric: one value per round. */
export type GroupRuns = Map<string, Map<string, number[]>>;

/**
 * The server's procedures under one prefix: `set(drop)` leaves exactly `drop` missing (it restores
 * the rest by `migrate()`, which creates missing procedures, and only when one is missing).
 */
export class ProcedureSwitch {
  private dropped: readonly Procedure[] = [];

  constructor(
    private readonly pool: mysql.Pool,
    private readonly prefix: string,
    private readonly migrate: () => Promise<unknown>,
  ) {}

  async set(drop: readonly Procedure[]): Promise<void> {
    if (drop.length === this.dropped.length && drop.every((p) => this.dropped.includes(p))) return;
    if (this.dropped.length > 0) await this.migrate();
    for (const p of drop) await this.pool.query(`DROP PROCEDURE IF EXISTS \`${this.prefix}${p}\``);
    this.dropped = [...drop];
  }
}

/**
 * Runs `run` once on the first of `sides` (a warm-up, not kept: the first run of a workload meets
 * cold pages and caches), then `rounds` times on each side, the sides in turns: round r starts at
 * side r (mod the count), so each side runs first and last as often as the others. `run` gets
 * the side and round and MUST use a taskrow instance made after the side was set (an instance
 * remembers a procedure it found missing for 60 s).
 */
export async function runSides(
  procs: ProcedureSwitch,
  rounds: number,
  sides: readonly Side[],
  run: (side: Side, round: number) => Promise<Measures>,
): Promise<GroupRuns> {
  const out: GroupRuns = new Map(sides.map((s) => [s.name, new Map()]));
  await procs.set(sides[0]!.drop);
  await run(sides[0]!, -1);
  for (let r = 0; r < rounds; r++) {
    for (const side of sides.map((_, i) => sides[(i + r) % sides.length]!)) {
      await procs.set(side.drop);
      const m = await run(side, r);
      for (const [k, v] of Object.entries(m)) {
        const at = out.get(side.name)!;
        at.set(k, [...(at.get(k) ?? []), v]);
      }
    }
  }
  await procs.set([]);
  return out;
}

/** One row of the report: metric `metric` of side `with` against side `without`. */
export interface Comparison {
  readonly procedure: string;
  readonly workload: string;
  readonly metric: string;
  /** 'ops/s': higher is better; 'ms': lower is better. */
  readonly unit: 'ops/s' | 'ms';
  readonly with: string;
  readonly without: string;
}

/** A comparison's figures: medians, the ratio of medians as a gain (above 1: faster with), the rounds' own ratios and each side's spread. */
export interface Compared {
  readonly withMedian: number;
  readonly withoutMedian: number;
  readonly ratio: number;
  readonly roundRatios: readonly number[];
  readonly spread: number;
}

/** The run-to-run spread of `xs`: (max - min) / median. */
const spreadOf = (xs: readonly number[]): number => (Math.max(...xs) - Math.min(...xs)) / median(xs);

/** The figures of comparison `c` over `runs`. */
export function compare(runs: GroupRuns, c: Comparison): Compared {
  const w = runs.get(c.with)?.get(c.metric) ?? [];
  const wo = runs.get(c.without)?.get(c.metric) ?? [];
  const gain = (a: number, b: number): number => (c.unit === 'ms' ? b / a : a / b);
  return {
    withMedian: median(w),
    withoutMedian: median(wo),
    ratio: gain(median(w), median(wo)),
    roundRatios: w.map((v, i) => gain(v, wo[i]!)),
    spread: Math.max(spreadOf(w), spreadOf(wo)),
  };
}

/** `v` in `unit` as printed. */
const fmt = (v: number, unit: 'ops/s' | 'ms'): string => (unit === 'ms' ? `${v.toFixed(1)} ms` : `${Math.round(v).toLocaleString('en-US')}/s`);

/** Prints the table of `rows` (each a comparison and its group's runs) for one server, with notes; returns the text. */
export function reportRoutines(server: BenchServer, rounds: number, rows: readonly [Comparison, GroupRuns][], notes: readonly string[]): string {
  const lines = [
    `\n## Stored procedures: with and without (${server.label})`,
    `server: ${server.label}`,
    `settings: ${server.durability}`,
    `machine: ${machineLine()}`,
    `medians of ${rounds} rounds (after one warm-up run per workload, not kept); ratio = the gain with the procedure (above 1.00: better with it); rounds = each round's own ratio, lowest to highest; spread = (max - min) / median of a side's runs, the larger side`,
    '| procedure | workload | metric | with | without | ratio | rounds | spread |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(([c, runs]) => {
      const f = compare(runs, c);
      const range = [...f.roundRatios].sort((a, b) => a - b).map((r) => r.toFixed(2));
      return `| ${c.procedure} | ${c.workload} | ${c.metric} | ${fmt(f.withMedian, c.unit)} | ${fmt(f.withoutMedian, c.unit)} | ${f.ratio.toFixed(2)}x | ${range.join(' ')} | ${(f.spread * 100).toFixed(0)}% |`;
    }),
    ...notes.map((n) => `note: ${n}`),
  ];
  const text = lines.join('\n');
  process.stdout.write(`${text}\n`);
  return text;
}
