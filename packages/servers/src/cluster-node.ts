import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopProcess } from './local.js';
import type { InstalledServer } from './manifest.js';
import { waitForServer } from './probe.js';
import { startWatchdog } from './watchdog.js';

/** The account and database every node gets, created locally on each node (never replicated). */
export const NODE_USER = 'taskrow';
export const NODE_PASSWORD = 'taskrow';
export const NODE_DATABASE = 'taskrow';

/** Init statements for a node; `local` keeps them out of replication (`SET sql_log_bin=0`, `SET wsrep_on=OFF`). */
export function nodeInitSql(local: string): string {
  return [
    local,
    `CREATE USER IF NOT EXISTS '${NODE_USER}'@'%' IDENTIFIED BY '${NODE_PASSWORD}';`,
    `GRANT ALL PRIVILEGES ON *.* TO '${NODE_USER}'@'%' WITH GRANT OPTION;`,
    `CREATE DATABASE IF NOT EXISTS \`${NODE_DATABASE}\` CHARACTER SET utf8mb4;`,
  ].join('\n');
}

/** `mysql://taskrow:taskrow@127.0.0.1:<port>/taskrow` */
export function nodeUrl(port: number): string {
  return `mysql://${NODE_USER}:${NODE_PASSWORD}@127.0.0.1:${port}/${NODE_DATABASE}`;
}

/** A node's private directory: on the host, and as the server sees it (inside its root when chrooted). */
export interface NodeDir {
  readonly host: string;
  readonly server: string;
}

/** Makes a private directory for one node of a cluster. */
export function makeNodeDir(s: InstalledServer, label: string): NodeDir {
  const base = s.root ? join(s.root, 'var', 'tmp') : tmpdir();
  mkdirSync(base, { recursive: true });
  const host = mkdtempSync(join(base, `taskrow-${label}-`));
  return { host, server: s.root ? host.slice(s.root.length) : host };
}

/** One run of a node's server process. */
export interface NodeRun {
  readonly proc: ChildProcess;
  /** Null while the process runs, else how it ended. */
  exited(): string | null;
  /** Stops the watchdog guarding this run (the process itself is left alone). */
  release(): void;
}

/**
 * Spawns the node's server with `args` (chrooted when the server lives in a root) under a watchdog
 * that stops it and removes `dir` if this process dies first, and resolves once it answers on `url`.
 * On failure the process is stopped and the error carries the tail of the node's error log.
 */
export async function runNode(s: InstalledServer, dir: NodeDir, args: string[], url: string, env: NodeJS.ProcessEnv = process.env): Promise<NodeRun> {
  const proc = s.root ? spawn('chroot', [s.root, s.server, ...args], { stdio: 'ignore', env }) : spawn(s.server, args, { stdio: 'ignore', env });
  let ended: string | null = null;
  proc.on('exit', (code, signal) => (ended = `exited with ${code ?? signal}`));
  if (proc.pid === undefined) throw new Error(`could not spawn ${s.server}`);
  const cancel = startWatchdog(proc.pid, dir.host);
  const run: NodeRun = { proc, exited: () => ended, release: cancel };
  try {
    await waitForServer(url, 180_000, () => ended);
    return run;
  } catch (err) {
    await stopProcess(proc);
    cancel();
    throw new Error(`${nodeLog(dir, (err as Error).message)}`, { cause: err });
  }
}

/** `message` followed by the tail of the node's error log. */
export function nodeLog(dir: NodeDir, message: string): string {
  const file = join(dir.host, 'error.log');
  const log = existsSync(file) ? readFileSync(file, 'utf8') : '(no error log)';
  return `${message}\n--- ${file} (tail) ---\n${log.slice(-3000)}`;
}

/** SIGKILLs the run's process by its pid and resolves once it has exited. */
export async function killRun(run: NodeRun): Promise<void> {
  const { proc } = run;
  if (proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined) return;
  const gone = new Promise<void>((r) => proc.once('exit', () => r()));
  process.kill(proc.pid, 'SIGKILL');
  await gone;
}

/** The pids of the nodes' running processes, undefined for a node that is down. */
export function runningPids(nodes: readonly { run?: NodeRun }[]): (number | undefined)[] {
  return nodes.map((n) => (n.run && n.run.exited() === null ? n.run.proc.pid : undefined));
}

/** SIGKILLs a node's process (as a crash would) and forgets it; the data directory stays. */
export async function killNodeRun(n: { run?: NodeRun }): Promise<void> {
  if (n.run) await killRun(n.run);
  n.run?.release();
  n.run = undefined;
}

/**
 * Stops the run (SIGTERM, then SIGKILL after 20 s), releases its watchdog and removes `dir`. A run
 * that ended on its own before (a crash, or a server that shut itself down) first has the tail of
 * its error log written to stderr, which is all that is left of it once `dir` is gone.
 */
export async function stopRun(run: NodeRun | undefined, dir: NodeDir): Promise<void> {
  const died = run?.exited() ?? null;
  if (died !== null) process.stderr.write(`${nodeLog(dir, `taskrow: a cluster node's server ${died} before it was stopped`)}\n`);
  if (run) {
    await stopProcess(run.proc);
    run.release();
  }
  if (process.env['TASKROW_KEEP_NODE_DIRS'] !== '1') rmSync(dir.host, { recursive: true, force: true });
}

/** Polls `check` every 100 ms until it resolves true; rejects with `what` and the last error after `timeoutMs`. */
export async function pollUntil(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = 'never true';
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${timeoutMs} ms (${String(last)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs `sql` on its own connection to `url` and returns the rows. */
export async function nodeQuery<Row = Record<string, unknown>>(url: string, sql: string): Promise<Row[]> {
  const { default: mysql } = await import('mysql2/promise');
  const conn = await mysql.createConnection({ uri: url, connectTimeout: 2000 });
  try {
    return (await conn.query(sql))[0] as Row[];
  } finally {
    await conn.end().catch(() => undefined);
  }
}
