import { readdirSync, readFileSync } from 'node:fs';
import type mysql from 'mysql2/promise';
import { median } from './lib.js';

// What a run cost per job, beside its rate: the server process's CPU, this process's CPU and
// InnoDB's buffer pool page requests. On a 2-core machine that holds the server and the clients,
// a rate moves with the machine's speed from run to run; the work per job does not. A rate that
// falls while the work per job stays the same is the machine (or waits: locks, the log's flushes);
// one whose work per job grows is the statements.

/** One run's cost per job; `serverUs` is undefined when the server is not a process of this host. */
export interface WorkPerJob {
  readonly serverUs: number | undefined;
  readonly clientUs: number;
  readonly pages: number;
}

/** Reads the counters a `WorkPerJob` is the difference of. */
export interface WorkProbe {
  read(): Promise<{ serverUs: number | undefined; clientUs: number; pages: number }>;
}

/** Linux's /proc reports CPU times in USER_HZ ticks, 100 a second on every architecture Node.js runs on. */
const TICK_US = 10_000;

/** The server's CPU time so far in µs (user + system, /proc/<pid>/stat), or undefined when that pid is not readable here. */
function processCpuUs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return undefined;
  }
}

/** The pid written in `file`, or undefined when it cannot be read here. */
function readPid(file: string): number | undefined {
  try {
    return Number.parseInt(readFileSync(file, 'utf8'), 10) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pid of the server whose `@@pid_file` is `pidFile`: that file as this process sees it, else
 * (a server run in a chroot, as the local servers of @taskrow/servers are) the process whose own
 * root holds that file naming it. Undefined when neither is on this host.
 */
function serverPid(pidFile: string): number | undefined {
  const direct = readPid(pidFile);
  if (direct !== undefined) return direct;
  for (const entry of readdirSync('/proc')) {
    if (/^\d+$/.test(entry) && readPid(`/proc/${entry}/root${pidFile}`) === Number(entry)) return Number(entry);
  }
  return undefined;
}

/**
 * A probe of the server behind `pool`: its CPU when it runs on this host (found through its own
 * `@@pid_file`), InnoDB's page requests from `SHOW GLOBAL STATUS`, this process's CPU.
 */
export async function workProbe(pool: mysql.Pool): Promise<WorkProbe> {
  const [rows] = await pool.query<mysql.RowDataPacket[]>('SELECT @@pid_file AS f');
  const pid = serverPid(String(rows[0]!['f']));
  return {
    async read() {
      const [status] = await pool.query<mysql.RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_read_requests'");
      const cpu = process.cpuUsage();
      return { serverUs: processCpuUs(pid), clientUs: cpu.user + cpu.system, pages: Number(status[0]!['Value']) };
    },
  };
}

/** The counters of `probe` now, to measure from. */
export type WorkMark = Awaited<ReturnType<WorkProbe['read']>>;

/** The work per job of `done` jobs since `before` (a `probe.read()`). */
export async function workSince(probe: WorkProbe, before: WorkMark, done: number): Promise<WorkPerJob> {
  const after = await probe.read();
  const per = (a: number, b: number): number => (a - b) / Math.max(1, done);
  const serverUs = after.serverUs === undefined || before.serverUs === undefined ? undefined : per(after.serverUs, before.serverUs);
  return { serverUs, clientUs: per(after.clientUs, before.clientUs), pages: per(after.pages, before.pages) };
}

/** The medians of `runs`' work per job as one phrase: `server CPU 72 µs, this process 21 µs, 45 page requests`. */
export function workLine(runs: readonly WorkPerJob[]): string {
  const server = runs.every((w) => w.serverUs !== undefined) ? `server CPU ${median(runs.map((w) => w.serverUs!)).toFixed(0)} µs, ` : '';
  return `${server}this process ${median(runs.map((w) => w.clientUs)).toFixed(0)} µs, ${median(runs.map((w) => w.pages)).toFixed(1)} buffer pool page requests`;
}

/** Server plus this process's CPU per job, the medians of `runs` (undefined without the server's). */
export function cpuPerJob(runs: readonly WorkPerJob[]): number | undefined {
  if (runs.length === 0 || runs.some((w) => w.serverUs === undefined)) return undefined;
  return median(runs.map((w) => w.serverUs! + w.clientUs));
}
