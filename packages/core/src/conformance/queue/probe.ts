import type { JobState } from '../../queue/model/tables.js';
import type { Probe } from '../harness.js';

/** One job row as the probe reads it, with times as seconds from the database's now. */
export interface ProbedJob {
  readonly id: number;
  readonly queue: string;
  readonly group: string;
  readonly state: JobState;
  readonly priority: number;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly token: number;
  readonly dedup: string | null;
  readonly payload: unknown;
  readonly lastError: string | null;
  /** `due_at` minus now, in seconds (lease expiry for running jobs). */
  readonly dueIn: number;
  /** `run_at` minus now, in seconds. */
  readonly runIn: number;
  /** `due_at` in ms since the epoch. */
  readonly dueAtMs: number;
}

/**
 * The documented meaning of the `phase` column (see the jobs table's DDL comment), written out
 * here rather than imported, so the probe stays a side channel independent of the engine.
 */
const PHASES: readonly JobState[] = ['ready', 'delayed', 'running', 'done', 'dead', 'blocked'];

const jobs = (prefix: string): string => `\`${prefix}queue_jobs\``;
const us = (col: string): string => `TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ${col})`;

interface Raw {
  id: unknown;
  queue: string;
  grp: string;
  phase: unknown;
  priority: unknown;
  attempt: unknown;
  max_attempts: unknown;
  token: unknown;
  dedup_k: Buffer | null;
  payload: string | Buffer;
  last_error: string | Buffer | null;
  due_us: unknown;
  run_us: unknown;
  now_us: unknown;
}

function toJob(r: Raw): ProbedJob {
  const now = Number(r.now_us);
  const text = (v: string | Buffer): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
  return {
    id: Number(r.id),
    queue: r.queue,
    group: r.grp,
    state: PHASES[Number(r.phase)]!,
    priority: Number(r.priority),
    attempt: Number(r.attempt),
    maxAttempts: Number(r.max_attempts),
    token: Number(r.token),
    dedup: r.dedup_k === null ? null : Buffer.from(r.dedup_k).toString('utf8'),
    payload: JSON.parse(text(r.payload)),
    lastError: r.last_error === null ? null : text(r.last_error),
    dueIn: (Number(r.due_us) - now) / 1e6,
    runIn: (Number(r.run_us) - now) / 1e6,
    dueAtMs: Number(r.due_us) / 1000,
  };
}

const SELECT = (prefix: string): string =>
  `SELECT id, queue, grp, phase, priority, attempt, max_attempts, token, dedup_k, payload, last_error,
          ${us('due_at')} AS due_us, ${us('run_at')} AS run_us, ${us('UTC_TIMESTAMP(6)')} AS now_us FROM ${jobs(prefix)}`;

/** Every row of `queue`, by id. */
export async function probeJobs(probe: Probe, prefix: string, queue: string): Promise<ProbedJob[]> {
  return (await probe.query<Raw>(`${SELECT(prefix)} WHERE queue = ? ORDER BY id`, [queue])).map(toJob);
}

/** One row by id, or undefined. */
export async function probeJob(probe: Probe, prefix: string, id: number): Promise<ProbedJob | undefined> {
  const rows = await probe.query<Raw>(`${SELECT(prefix)} WHERE id = ?`, [id]);
  return rows[0] ? toJob(rows[0]) : undefined;
}

/** Rows of the whole jobs table (every queue). */
export async function probeTotal(probe: Probe, prefix: string): Promise<number> {
  return Number((await probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${jobs(prefix)}`))[0]?.n);
}

/** Moves time for `ids`: their `due_at` (lease expiry, run time, purge time) becomes `seconds` ago. */
export async function makeDue(probe: Probe, prefix: string, ids: readonly number[], seconds = 1): Promise<void> {
  if (ids.length === 0) return;
  await probe.query(`UPDATE ${jobs(prefix)} SET due_at = UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND WHERE id IN (${ids.map(() => '?').join(', ')})`, [
    Math.round(seconds * 1e6),
    ...ids,
  ]);
}

/** Sets `due_at` of job `id` to `seconds` from now (negative: in the past): moves a job in line or in time. */
export async function setDueOffset(probe: Probe, prefix: string, id: number, seconds: number): Promise<void> {
  await probe.query(`UPDATE ${jobs(prefix)} SET due_at = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND WHERE id = ?`, [Math.round(seconds * 1e6), id]);
}

/**
 * Payloads of `queue`'s rows by id, uncommitted ones included (a dirty read of the clustered
 * index, where an insert writes first): shows how far another transaction's insert has got even
 * while it waits on a unique key. The isolation level applies to this one statement.
 */
export async function probeDirtyPayloads(probe: Probe, prefix: string, queue: string): Promise<unknown[]> {
  await probe.query('SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
  const rows = await probe.query<{ payload: string | Buffer }>(`SELECT payload FROM ${jobs(prefix)} FORCE INDEX (PRIMARY) WHERE queue = ? ORDER BY id`, [
    queue,
  ]);
  return rows.map((r) => JSON.parse(Buffer.isBuffer(r.payload) ? r.payload.toString('utf8') : String(r.payload)));
}

/** The database clock in ms since the epoch. */
export async function probeNowMs(probe: Probe): Promise<number> {
  return Number((await probe.query<{ n: unknown }>(`SELECT ${us('UTC_TIMESTAMP(6)')} AS n`))[0]?.n) / 1000;
}

/** Polls `check` every 25 ms until it is true; fails after `seconds`. For events only another actor causes. */
export async function until(what: string, check: () => Promise<boolean> | boolean, seconds = 20): Promise<void> {
  const end = Date.now() + seconds * 1000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The server thread of another session whose statement running now starts with `start` (0 when
 * none): a statement of a stored procedure shows as itself, not as its CALL. MySQL fails a read of
 * `information_schema.processlist` while any session's statement text is not valid UTF-8 (a binary
 * value sent inline, as the `mariadb` driver does), so there it reads `performance_schema.threads`;
 * MariaDB leaves the performance schema off by default.
 */
export async function runningStatement(probe: Probe, engine: 'mysql' | 'mariadb', start: string): Promise<number> {
  const like = `${start.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const sql =
    engine === 'mysql'
      ? 'SELECT processlist_id AS id FROM performance_schema.threads WHERE processlist_id <> CONNECTION_ID() AND processlist_info LIKE ?'
      : 'SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND info LIKE ?';
  const rows = await probe.query<{ id: unknown }>(sql, [like]);
  return Number(rows[0]?.id ?? 0);
}

/** One keyed job as the probe reads it: state, concurrency key (`conc_key`) and lease left. */
export interface ProbedKeyed {
  readonly id: number;
  readonly state: JobState;
  readonly key: string | null;
  readonly payload: unknown;
  /** `due_at` minus now, in seconds. */
  readonly dueIn: number;
}

/** Every row of `queue` with its concurrency key, by id. */
export async function probeKeyed(probe: Probe, prefix: string, queue: string): Promise<ProbedKeyed[]> {
  const rows = await probe.query<{ id: unknown; phase: unknown; conc_key: string | Buffer | null; payload: string | Buffer; due_in: unknown }>(
    `SELECT id, phase, conc_key, payload, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), due_at) AS due_in FROM ${jobs(prefix)} WHERE queue = ? ORDER BY id`,
    [queue],
  );
  const text = (v: string | Buffer): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
  return rows.map((r) => ({
    id: Number(r.id),
    state: PHASES[Number(r.phase)]!,
    key: r.conc_key === null ? null : text(r.conc_key),
    payload: JSON.parse(text(r.payload)),
    dueIn: Number(r.due_in) / 1e6,
  }));
}

/** The `<prefix>queue_keyed` rows of `queue` (jobs of concurrency keys that hold or wait for a slot, and rows not yet deleted after their job left). */
export async function probeKeyedRows(probe: Probe, prefix: string, queue: string): Promise<number> {
  const rows = await probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${prefix}queue_keyed\` WHERE queue = ?`, [queue]);
  return Number(rows[0]?.n ?? 0);
}

/** Running jobs (lease not expired) per concurrency key of `queue`, as the database holds them now. */
export async function probeRunningByKey(probe: Probe, prefix: string, queue: string): Promise<Map<string, number>> {
  const rows = await probe.query<{ k: string | Buffer; n: unknown }>(
    `SELECT conc_key AS k, COUNT(*) AS n FROM ${jobs(prefix)} WHERE queue = ? AND phase = 2 AND conc_key IS NOT NULL GROUP BY conc_key`,
    [queue],
  );
  return new Map(rows.map((r) => [Buffer.isBuffer(r.k) ? r.k.toString('utf8') : String(r.k), Number(r.n)]));
}
