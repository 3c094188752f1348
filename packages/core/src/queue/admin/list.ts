import type { Executor } from '../../engine/executor.js';
import { invalid } from '../../errors.js';
import { validateName } from '../../names.js';
import type { SqlValue } from '../../port.js';
import { intArg, optionsOf, show, toNumber } from '../../validate.js';
import { decodePayload } from '../model/payload.js';
import { epochMicros, PHASE, STATE_OF, type JobState, type QueueTables } from '../model/tables.js';
import type { JobInfo, JobPage, QueueListOptions } from '../model/types.js';

/** Most jobs one `list()` page returns, and the default. */
export const MAX_LIST = 1000;
const DEFAULT_LIST = 100;

/** A job row as `list()` and `getJob()` read it. */
export interface InfoRow {
  id: unknown;
  phase: unknown;
  grp: string;
  priority: unknown;
  ready_priority: unknown;
  attempt: unknown;
  max_attempts: unknown;
  payload: unknown;
  last_error: unknown;
  /** `due_at` as exact text, for the cursor (microseconds past year 2255 exceed a double's precision). */
  due_s: unknown;
  due_us: unknown;
  run_us: unknown;
  created_us: unknown;
  finished_us: unknown;
  result: unknown;
  progress: unknown;
  conc_key: unknown;
}

const COLUMNS = `\`id\`, \`phase\`, \`grp\`, \`priority\`, \`ready_priority\`, \`attempt\`, \`max_attempts\`, \`payload\`, \`last_error\`,
  DATE_FORMAT(\`due_at\`, '%Y-%m-%d %H:%i:%s.%f') AS due_s, ${epochMicros('`due_at`')} AS due_us, ${epochMicros('`run_at`')} AS run_us,
  ${epochMicros('`created_at`')} AS created_us, ${epochMicros('`finished_at`')} AS finished_us, \`result\`, \`progress\`, \`conc_key\``;

const dateOf = (us: unknown): Date => new Date(toNumber(us) / 1000);
const textOf = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));

/** Where a page ended: the `claim` index position of its last job. */
export interface Cursor {
  readonly phase: number;
  readonly readyPriority: number;
  readonly due: string;
  readonly group: string;
  readonly id: number;
}

const DUE_TEXT = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$/;

/** The cursor of a row: its position in the `claim` index. */
export function cursorOf(r: InfoRow): Cursor {
  return { phase: toNumber(r.phase), readyPriority: toNumber(r.ready_priority), due: textOf(r.due_s), group: r.grp, id: toNumber(r.id) };
}

function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.phase, c.readyPriority, c.due, c.group, c.id]), 'utf8').toString('base64url');
}

/** Reads a cursor `list()` handed out. MUST reject anything else, naming it, before any SQL. */
function decodeCursor(after: unknown): Cursor {
  const bad = (): never => {
    throw invalid(`list() after must be the next value of an earlier list() page, got ${show(after)}`);
  };
  if (typeof after !== 'string' || after.length > 400) return bad();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'));
  } catch {
    return bad();
  }
  if (!Array.isArray(v) || v.length !== 5) return bad();
  const [phase, readyPriority, due, group, id] = v as unknown[];
  const ok =
    Number.isInteger(phase) &&
    STATE_OF[phase as number] !== undefined &&
    Number.isInteger(readyPriority) &&
    Math.abs(readyPriority as number) <= 32768 &&
    typeof due === 'string' &&
    DUE_TEXT.test(due) &&
    typeof group === 'string' &&
    group.length <= 64 &&
    Number.isSafeInteger(id) &&
    (id as number) > 0;
  if (!ok) return bad();
  return { phase: phase as number, readyPriority: readyPriority as number, due: due as string, group: group as string, id: id as number };
}

/** The phases to list, ascending. */
function phasesArg(state: QueueListOptions['state']): number[] {
  if (state === undefined) return STATE_OF.map((_, i) => i);
  const states: unknown[] = typeof state === 'string' ? [state] : Array.isArray(state) ? state : [state];
  if (states.length === 0) throw invalid('list() state must name at least one state');
  const phases = states.map((s) => {
    if (typeof s !== 'string' || !(s in PHASE)) throw invalid(`list() state must be one of ${STATE_OF.join(', ')}, got ${show(s)}`);
    return PHASE[s as JobState];
  });
  return [...new Set(phases)].sort((a, b) => a - b);
}

/** Validated `list()` options. MUST throw before any SQL on bad input. */
export function listArgs(options: QueueListOptions | undefined): { phases: number[]; group: string | undefined; limit: number; after: Cursor | undefined } {
  const o = optionsOf('list()', options, ['state', 'group', 'limit', 'after']) as QueueListOptions;
  return {
    phases: phasesArg(o.state),
    group: o.group === undefined ? undefined : validateName('group', o.group),
    limit: intArg('list() limit', o.limit ?? DEFAULT_LIST, 1, MAX_LIST),
    after: o.after === undefined ? undefined : decodeCursor(o.after),
  };
}

function toInfo<P>(queue: string, r: InfoRow): JobInfo<P> {
  return Object.freeze({
    id: toNumber(r.id),
    queue,
    state: STATE_OF[toNumber(r.phase)]!,
    payload: decodePayload<P>(r.payload),
    attempt: toNumber(r.attempt),
    maxAttempts: toNumber(r.max_attempts),
    priority: toNumber(r.priority),
    group: r.grp === '' ? null : r.grp,
    concurrencyKey: r.conc_key === null || r.conc_key === undefined ? null : textOf(r.conc_key),
    runAt: dateOf(r.run_us),
    dueAt: dateOf(r.due_us),
    createdAt: dateOf(r.created_us),
    finishedAt: r.finished_us === null || r.finished_us === undefined ? null : dateOf(r.finished_us),
    lastError: r.last_error === null || r.last_error === undefined ? null : textOf(r.last_error),
    result: r.result === null || r.result === undefined ? null : decodePayload(r.result),
    progress: r.progress === null || r.progress === undefined ? null : decodePayload(r.progress),
  });
}

/** After the cursor inside its phase, in `claim` index order (ready_priority, due_at, grp, id). */
const AFTER =
  '(`ready_priority` > ? OR (`ready_priority` = ? AND (`due_at` > CAST(? AS DATETIME(6)) OR (`due_at` = CAST(? AS DATETIME(6))' +
  ' AND (`grp` > ? OR (`grp` = ? AND `id` > ?))))))';

/**
 * The statement that reads one phase of a page: up to `n` rows of the queue's `claim` index range
 * for `phase` (and `group`), after `from` when given, in index order. A plain read, no locks.
 */
export function pageQuery(
  t: QueueTables,
  queue: string,
  phase: number,
  group: string | undefined,
  from: Cursor | undefined,
  n: number,
): { sql: string; params: SqlValue[] } {
  const params: SqlValue[] = [queue, phase];
  let where = '`queue` = ? AND `phase` = ?';
  if (group !== undefined) {
    where += ' AND `grp` = ?';
    params.push(group);
  }
  if (from) {
    where += ` AND ${AFTER}`;
    params.push(from.readyPriority, from.readyPriority, from.due, from.due, from.group, from.group, from.id);
  }
  return {
    sql: `SELECT ${COLUMNS} FROM ${t.jobs} FORCE INDEX (\`claim\`) WHERE ${where} ORDER BY \`ready_priority\`, \`due_at\`, \`grp\`, \`id\` LIMIT ${n}`,
    params,
  };
}

/**
 * One page of `list()`: per phase, one `pageQuery`, asking for one row more than the page still
 * needs so the last page is known as such.
 */
export async function listJobs<P>(exec: Executor, t: QueueTables, queue: string, args: ReturnType<typeof listArgs>): Promise<JobPage<P>> {
  const found: InfoRow[] = [];
  for (const phase of args.phases) {
    if (found.length > args.limit) break;
    if (args.after && phase < args.after.phase) continue;
    const from = args.after?.phase === phase ? args.after : undefined;
    const q = pageQuery(t, queue, phase, args.group, from, args.limit + 1 - found.length);
    found.push(...(await exec.query<InfoRow>(q.sql, q.params)).rows);
  }
  const page = found.slice(0, args.limit);
  const last = page[page.length - 1];
  const next = found.length > args.limit && last ? encodeCursor(cursorOf(last)) : undefined;
  return { jobs: page.map((r) => toInfo<P>(queue, r)), next };
}

/** One job of `queue` by id, or null. */
export async function getJobInfo<P>(exec: Executor, t: QueueTables, queue: string, id: number): Promise<JobInfo<P> | null> {
  const { rows } = await exec.query<InfoRow>(`SELECT ${COLUMNS} FROM ${t.jobs} WHERE \`id\` = ? AND \`queue\` = ?`, [id, queue]);
  return rows[0] ? toInfo<P>(queue, rows[0]) : null;
}
