import { epochMicros } from '../sql.js';
import { performance } from 'node:perf_hooks';
import { placeholderList } from '../chunk.js';
import type { Executor } from '../engine/executor.js';
import { invalid } from '../errors.js';
import { keyDigest } from '../keys.js';
import type { SqlConnection, SqlValue } from '../port.js';
import { intArg, optionsOf, show, toNumber } from '../validate.js';
import { sanitize } from './rules.js';
import { FROM_MICROS, NOW, runs } from './sql.js';
import type { ResourcesTables } from './tables.js';
import type { FlowEdge, TimeWindow, TraversedEdge } from './types.js';

/** One edge to record: names already sanitized. */
export interface Edge {
  readonly kind: 'input' | 'output';
  readonly src: string;
  readonly dst: string;
  readonly srcH: Buffer;
  readonly dstH: Buffer;
  /** Identity for dedup and throttling. */
  readonly id: string;
}

function edge(kind: Edge['kind'], src: string, dst: string): Edge {
  const srcH = keyDigest(Buffer.from(src, 'utf8'));
  const dstH = keyDigest(Buffer.from(dst, 'utf8'));
  return { kind, src, dst, srcH, dstH, id: `${srcH.toString('binary')}${dstH.toString('binary')}${kind}` };
}

/**
 * The edges jobs.py records for a job: `input -> job` and `job -> output`, every run of digits and
 * dashes replaced by `*`. None when every sanitized input and output starts with `test.` (as in
 * jobs.py, a job with no keys records nothing either). Sorted by primary key, without repeats.
 */
export function flowEdges(job: string, inputs: readonly string[], outputs: readonly string[]): Edge[] {
  const ins = inputs.map(sanitize);
  const outs = outputs.map(sanitize);
  if ([...ins, ...outs].every((x) => x.startsWith('test.'))) return [];
  const j = sanitize(job);
  const all = new Map<string, Edge>();
  for (const e of [...ins.map((i) => edge('input', i, j)), ...outs.map((o) => edge('output', j, o))]) all.set(e.id, e);
  return [...all.values()].sort((a, b) => Buffer.compare(a.srcH, b.srcH) || Buffer.compare(a.dstH, b.dstH) || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0));
}

/**
 * Skips edges this process recorded less than `seconds` ago, so jobs that share a flow (same
 * sanitized names) do not all rewrite one hot row: `lastSeen` is exact to within that interval.
 */
export class EdgeThrottle {
  private readonly recent = new Map<string, number>();
  constructor(private readonly seconds = 1) {}

  due(edges: readonly Edge[]): Edge[] {
    const now = performance.now();
    return edges.filter((e) => (this.recent.get(e.id) ?? -Infinity) <= now - this.seconds * 1000);
  }

  noteWritten(edges: readonly Edge[]): void {
    if (this.recent.size > 10_000) this.recent.clear();
    const now = performance.now();
    for (const e of edges) this.recent.set(e.id, now);
  }
}

/** Upserts `edges` (sorted by primary key) with `last_seen` = now by the database clock. */
export async function recordEdges(conn: SqlConnection, t: ResourcesTables, edges: readonly Edge[]): Promise<void> {
  for (const part of runs(edges, 200)) {
    await conn.query(
      `INSERT INTO ${t.edges} (\`src_h\`, \`dst_h\`, \`kind\`, \`src\`, \`dst\`, \`last_seen\`)
       VALUES ${part.map(() => `(?, ?, ?, ?, ?, ${NOW})`).join(', ')}
       ON DUPLICATE KEY UPDATE \`last_seen\` = ${NOW}`,
      part.flatMap((e) => [e.srcH, e.dstH, e.kind, Buffer.from(e.src, 'utf8'), Buffer.from(e.dst, 'utf8')]),
    );
  }
}

function when(what: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) throw invalid(`${what} must be a valid Date, got ${show(value)}`);
  return value.getTime() * 1000;
}

/** SQL and parameters for a `TimeWindow` on `last_seen`. */
function windowSql(window: TimeWindow | undefined): { sql: string; params: SqlValue[] } {
  if (window !== undefined && (window === null || typeof window !== 'object')) throw invalid('the time window must be an object');
  const after = when('after', window?.after);
  const before = when('before', window?.before);
  const parts: string[] = [];
  const params: SqlValue[] = [];
  if (after !== undefined) {
    parts.push(`\`last_seen\` >= ${FROM_MICROS}`);
    params.push(after);
  }
  if (before !== undefined) {
    parts.push(`\`last_seen\` < ${FROM_MICROS}`);
    params.push(before);
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(''), params };
}

interface EdgeRow {
  kind: string;
  src: Buffer;
  dst: Buffer;
  us: unknown;
}

const SELECT_EDGE = `SELECT \`kind\`, \`src\`, \`dst\`, ${epochMicros('`last_seen`')} AS us FROM`;

function toEdge(r: EdgeRow): FlowEdge {
  return {
    kind: r.kind === 'output' ? 'output' : 'input',
    from: Buffer.from(r.src).toString('utf8'),
    to: Buffer.from(r.dst).toString('utf8'),
    lastSeen: new Date(toNumber(r.us) / 1000),
  };
}

const order = (a: FlowEdge, b: FlowEdge): number =>
  a.kind.localeCompare(b.kind) || (a.from < b.from ? -1 : a.from > b.from ? 1 : 0) || (a.to < b.to ? -1 : a.to > b.to ? 1 : 0);

/** Every edge seen in the window. */
export async function queryEdges(exec: Executor, t: ResourcesTables, window: TimeWindow | undefined): Promise<FlowEdge[]> {
  optionsOf('edges()', window, ['after', 'before']);
  const w = windowSql(window);
  const { rows } = await exec.query<EdgeRow>(`${SELECT_EDGE} ${t.edges} WHERE 1 = 1${w.sql}`, w.params);
  return rows.map(toEdge).sort(order);
}

/**
 * Breadth-first walk over the edges seen in the window, from `start` (sanitized) downstream
 * (towards jobs and their outputs) or upstream, at most `depth` edges away (default: no limit).
 * Each edge is reported once, at its smallest distance.
 */
export async function traverse(
  exec: Executor,
  t: ResourcesTables,
  start: string,
  downstream: boolean,
  options: (TimeWindow & { depth?: number }) | undefined,
): Promise<TraversedEdge[]> {
  optionsOf(`${downstream ? 'downstream' : 'upstream'}()`, options, ['after', 'before', 'depth']);
  const w = windowSql(options);
  const depth = options?.depth === undefined ? Infinity : intArg('depth', options.depth, 1, 1_000_000);
  const from = sanitize(start);
  const visited = new Set([from]);
  const out: TraversedEdge[] = [];
  let frontier = [from];
  for (let d = 1; frontier.length > 0 && d <= depth; d++) {
    const next: string[] = [];
    const level: FlowEdge[] = [];
    for (const part of runs(frontier)) {
      const col = downstream ? '`src_h`' : '`dst_h`';
      const { rows } = await exec.query<EdgeRow>(`${SELECT_EDGE} ${t.edges} WHERE ${col} IN (${placeholderList(part.length)})${w.sql}`, [
        ...part.map((n) => keyDigest(Buffer.from(n, 'utf8'))),
        ...w.params,
      ]);
      const names = new Set(part);
      for (const e of rows.map(toEdge)) if (names.has(downstream ? e.from : e.to)) level.push(e);
    }
    for (const e of level.sort(order)) {
      out.push({ ...e, depth: d });
      const node = downstream ? e.to : e.from;
      if (!visited.has(node)) {
        visited.add(node);
        next.push(node);
      }
    }
    frontier = next;
  }
  return out;
}
