import { readdirSync, readFileSync } from 'node:fs';
import type mysql from 'mysql2/promise';

// A run's cost per job: the server process's CPU and this process's CPU (where the client, the
// workers and the producers all run), and the server's time broken down by statement from
// performance_schema's statement digests: what each statement costs per job, how often it runs and
// how many rows it reads. A statement's time is wall time on the server: it includes lock waits
// and, for a CALL, the statements the procedure runs and any wait inside it (a claim that waits
// for work); the procedure lines say how much of a CALL its statements took.

/** One statement digest's share of a profiled run. */
export interface StatementCost {
  /** The normalised statement text, cut to `TEXT_CHARS`. */
  readonly text: string;
  readonly callsPerJob: number;
  /** Server time (statement start to end) per job, microseconds. */
  readonly usPerJob: number;
  readonly rowsExaminedPerCall: number;
}

const TEXT_CHARS = 120;
const PICOSECONDS_PER_US = 1e6;

/** A profiled run: CPU per job of the server and of this process, statements and procedures. */
export interface RunProfile {
  readonly jobs: number;
  /** CPU time of the server's process per job, µs (undefined where its pid cannot be read on this host). */
  readonly serverCpuUs: number | undefined;
  readonly clientCpuUs: number;
  readonly statements: readonly StatementCost[];
  readonly procedures: readonly ProcedureCost[];
  readonly nested: readonly NestedCost[];
}

/** A statement procedures ran, from a sample of the run's statement events. */
export interface NestedCost {
  readonly text: string;
  readonly sampled: number;
  readonly meanUs: number;
  readonly rowsExamined: number;
}

/** One stored procedure's share of a profiled run. */
export interface ProcedureCost {
  readonly name: string;
  readonly callsPerJob: number;
  /** Wall time of its CALLs per job, µs. */
  readonly usPerJob: number;
  /** Of that, the time of the statements it ran, µs per job. */
  readonly statementsUsPerJob: number;
  readonly statementsPerCall: number;
}

/**
 * The CPU time so far, µs, of the local server process listening on `port` (found by its
 * `--port=` argument in /proc; chrooted servers included); undefined where there is none.
 */
function serverCpuUs(port: number): number | undefined {
  const isServer = (args: string[]): boolean => args.includes(`--port=${port}`) && args.some((a) => /mysqld|mariadbd/.test(a));
  const pid = readdirSync('/proc').find((d) => /^\d+$/.test(d) && isServer(cmdline(d)));
  if (pid === undefined) return undefined;
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // utime and stime, fields 14 and 15, in clock ticks of 10 ms, counted after the command name in parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

function cmdline(pid: string): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

/** Whether the server behind `pool` collects statement digests (performance_schema on, digest consumer enabled). */
export async function digestsCollected(pool: mysql.Pool): Promise<boolean> {
  const [on] = await pool.query<mysql.RowDataPacket[]>('SELECT @@performance_schema AS ps');
  if (Number(on[0]?.['ps']) !== 1) return false;
  const [rows] = await pool.query<mysql.RowDataPacket[]>("SELECT ENABLED AS e FROM performance_schema.setup_consumers WHERE NAME = 'statements_digest'");
  return rows[0]?.['e'] === 'YES';
}

/**
 * Runs `work` (which resolves to the number of jobs it did) with the digest and program summaries
 * emptied before it, and returns its cost per job: CPU of the server and of this process, and the
 * `top` statements and procedures of schema `schema` by server time. Nothing else may run on the
 * server or in this process meanwhile: the summaries are server-wide.
 */
export async function profileRun(pool: mysql.Pool, url: string, schema: string, work: () => Promise<number>, top = 12): Promise<RunProfile> {
  const port = Number(new URL(url).port);
  await pool.query('TRUNCATE TABLE performance_schema.events_statements_summary_by_digest');
  await pool.query('TRUNCATE TABLE performance_schema.events_statements_summary_by_program');
  await pool.query("UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME = 'events_statements_history_long'");
  await pool.query('TRUNCATE TABLE performance_schema.events_statements_history_long');
  const server0 = serverCpuUs(port);
  const client0 = process.cpuUsage();
  const jobs = Math.max(1, await work());
  const client = process.cpuUsage(client0);
  const server1 = serverCpuUs(port);
  return {
    jobs,
    serverCpuUs: server0 === undefined || server1 === undefined ? undefined : (server1 - server0) / jobs,
    clientCpuUs: (client.user + client.system) / jobs,
    statements: await topStatements(pool, schema, jobs, top),
    procedures: await procedures(pool, schema, jobs),
    nested: await nestedStatements(pool),
  };
}

/**
 * The statements procedures ran, from the last statement events the server kept
 * (`events_statements_history_long`, a sample of the run's end): per statement text, how many
 * the sample holds and their mean time. Empty where the server records no nested statements.
 */
async function nestedStatements(pool: mysql.Pool): Promise<NestedCost[]> {
  const [rows] = await pool.query<mysql.RowDataPacket[]>(
    `SELECT LEFT(REGEXP_REPLACE(SQL_TEXT, '[[:space:]]+', ' '), ?) AS t, COUNT(*) AS n, AVG(TIMER_WAIT) AS w, AVG(ROWS_EXAMINED) AS x
       FROM performance_schema.events_statements_history_long
      WHERE NESTING_EVENT_TYPE = 'STATEMENT' AND NESTING_EVENT_LEVEL > 0 GROUP BY t ORDER BY SUM(TIMER_WAIT) DESC LIMIT 12`,
    [TEXT_CHARS],
  );
  return rows.map((r) => ({ text: String(r['t']), sampled: Number(r['n']), meanUs: Number(r['w']) / PICOSECONDS_PER_US, rowsExamined: Number(r['x']) }));
}

async function topStatements(pool: mysql.Pool, schema: string, jobs: number, top: number): Promise<StatementCost[]> {
  const [rows] = await pool.query<mysql.RowDataPacket[]>(
    `SELECT DIGEST_TEXT AS t, COUNT_STAR AS n, SUM_TIMER_WAIT AS w, SUM_ROWS_EXAMINED AS x
       FROM performance_schema.events_statements_summary_by_digest
      WHERE SCHEMA_NAME = ? AND DIGEST_TEXT NOT LIKE '%performance\\_schema%' ORDER BY SUM_TIMER_WAIT DESC LIMIT ?`,
    [schema, top],
  );
  return rows.map((r) => ({
    text: String(r['t'] ?? '(no digest text)')
      .replace(/\s+/g, ' ')
      .slice(0, TEXT_CHARS),
    callsPerJob: Number(r['n']) / jobs,
    usPerJob: Number(r['w']) / PICOSECONDS_PER_US / jobs,
    rowsExaminedPerCall: Number(r['x']) / Math.max(1, Number(r['n'])),
  }));
}

async function procedures(pool: mysql.Pool, schema: string, jobs: number): Promise<ProcedureCost[]> {
  const [rows] = await pool.query<mysql.RowDataPacket[]>(
    `SELECT OBJECT_NAME AS o, COUNT_STAR AS n, SUM_TIMER_WAIT AS w, COUNT_STATEMENTS AS c, SUM_STATEMENTS_WAIT AS sw
       FROM performance_schema.events_statements_summary_by_program
      WHERE OBJECT_SCHEMA = ? AND OBJECT_TYPE = 'PROCEDURE' AND COUNT_STAR > 0 ORDER BY SUM_TIMER_WAIT DESC`,
    [schema],
  );
  return rows.map((r) => ({
    name: String(r['o']),
    callsPerJob: Number(r['n']) / jobs,
    usPerJob: Number(r['w']) / PICOSECONDS_PER_US / jobs,
    statementsUsPerJob: Number(r['sw']) / PICOSECONDS_PER_US / jobs,
    statementsPerCall: Number(r['c']) / Math.max(1, Number(r['n'])),
  }));
}

/** The profile as note lines: CPU per job, then µs per job, calls per job and rows examined per call of each statement. */
export function profileLines(title: string, p: RunProfile): string[] {
  const us = (n: number): string => n.toFixed(1).padStart(7);
  return [
    `${title}: ${p.jobs.toLocaleString('en-US')} jobs; CPU per job: server process ${p.serverCpuUs === undefined ? 'unknown' : `${p.serverCpuUs.toFixed(1)} µs`}, this process (client, workers, producers) ${p.clientCpuUs.toFixed(1)} µs`,
    '  statements by server time per job (performance_schema digests; wall time on the server, lock waits included):',
    ...p.statements.map(
      (c) =>
        `  ${us(c.usPerJob)} µs/job  ${c.callsPerJob.toFixed(3).padStart(7)} calls/job  ${c.rowsExaminedPerCall.toFixed(1).padStart(7)} rows examined/call  ${c.text}`,
    ),
    ...(p.procedures.length > 0 ? ["  procedures (a CALL's time, and how much of it its statements took):"] : []),
    ...p.procedures.map(
      (c) =>
        `  ${us(c.usPerJob)} µs/job  ${c.callsPerJob.toFixed(3).padStart(7)} calls/job  ${us(c.statementsUsPerJob)} µs/job in ${c.statementsPerCall.toFixed(1)} statements/call  ${c.name}`,
    ),
    ...(p.nested.length > 0 ? ['  statements inside procedures (a sample: the last statement events the server kept), mean time each:'] : []),
    ...p.nested.map(
      (c) => `  ${us(c.meanUs)} µs each  ${String(c.sampled).padStart(7)} sampled  ${c.rowsExamined.toFixed(1).padStart(7)} rows examined  ${c.text}`,
    ),
  ];
}
