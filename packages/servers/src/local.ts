import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InstalledServer } from './manifest.js';
import { freePort } from './ports.js';
import { waitForServer } from './probe.js';
import type { Durability, ServerHandle } from './types.js';
import { shortVersion } from './version.js';
import { startWatchdog } from './watchdog.js';

const USER = 'taskrow';
const PASSWORD = 'taskrow';
const DATABASE = 'taskrow';

/** Runs before the server accepts connections: the test account and database. One statement a line. */
const INIT_SQL = [
  `CREATE USER IF NOT EXISTS '${USER}'@'%' IDENTIFIED BY '${PASSWORD}';`,
  `GRANT ALL PRIVILEGES ON *.* TO '${USER}'@'%' WITH GRANT OPTION;`,
  `CREATE DATABASE IF NOT EXISTS \`${DATABASE}\` CHARACTER SET utf8mb4;`,
].join('\n');

/** Runs `cmd` on the host or chrooted in `root`, synchronously; throws with its output on failure. */
function run(server: InstalledServer, cmd: string, args: string[], what: string): void {
  const [file, argv] = server.root ? ['chroot', [server.root, cmd, ...args]] : [cmd, args];
  const res = spawnSync(file, argv, { encoding: 'utf8', timeout: 120_000 });
  if (res.status !== 0) {
    throw new Error(`${what} failed (exit ${res.status ?? res.signal}): ${(res.stderr || res.stdout || '').slice(-2000)}`);
  }
}

/** Server flags shared by both engines, plus each engine's own. */
/**
 * The command line of a server on `dir` and `port`. With `performanceSchema`, statement
 * instrumentation is on for every engine (MySQL's default; MariaDB's default is off), for the
 * benchmarks' per-statement profiles; otherwise each engine keeps its own default.
 */
export function serverArgs(s: InstalledServer, dir: string, port: number, durability: Durability, performanceSchema = false): string[] {
  const args = [
    '--no-defaults',
    `--datadir=${dir}/data`,
    `--socket=${dir}/mysqld.sock`,
    `--pid-file=${dir}/mysqld.pid`,
    `--log-error=${dir}/error.log`,
    `--init-file=${dir}/init.sql`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    '--user=root',
    '--skip-name-resolve',
    '--character-set-server=utf8mb4',
    '--max-connections=4000',
    '--innodb-buffer-pool-size=256M',
  ];
  if (durability === 'relaxed') args.push('--innodb-flush-log-at-trx-commit=0', '--innodb-doublewrite=0', '--sync-binlog=0');
  else args.push('--innodb-flush-log-at-trx-commit=1', '--innodb-doublewrite=ON', '--sync-binlog=1');
  if (s.engine === 'mysql') args.push('--secure-file-priv=NULL', '--mysqlx=OFF', '--skip-log-bin');
  if (performanceSchema) args.push('--performance-schema=ON');
  return args;
}

/** Initialises an empty data directory with the engine's own tool. */
export function initialise(s: InstalledServer, dir: string): void {
  if (s.engine === 'mysql') {
    run(
      s,
      s.server,
      ['--no-defaults', '--initialize-insecure', `--datadir=${dir}/data`, '--user=root', `--log-error=${dir}/init.log`],
      'mysqld --initialize-insecure',
    );
  } else {
    run(
      s,
      s.installDb ?? '/usr/bin/mariadb-install-db',
      ['--no-defaults', `--datadir=${dir}/data`, '--user=root', '--auth-root-authentication-method=normal', '--skip-test-db', '--innodb-log-file-size=16M'],
      'mariadb-install-db',
    );
  }
}

/**
 * Starts an installed server on a private data directory and a free loopback port, and resolves
 * once it answers queries. The process is stopped by its own pid; a watchdog stops it if this
 * process dies first. MUST NOT leave the data directory behind after `stop()`.
 */
export async function startLocal(s: InstalledServer, durability: Durability, fixedPort?: number, performanceSchema = false): Promise<ServerHandle> {
  // Data lives where the server can see it: inside its root when chrooted.
  const base = s.root ? join(s.root, 'var', 'tmp') : tmpdir();
  mkdirSync(base, { recursive: true });
  const hostDir = mkdtempSync(join(base, `taskrow-${s.engine}-`));
  const serverDir = s.root ? hostDir.slice(s.root.length) : hostDir;
  let child: ChildProcess | undefined;
  let cancelWatchdog = (): void => undefined;
  const cleanup = (): void => rmSync(hostDir, { recursive: true, force: true });
  try {
    initialise(s, serverDir);
    writeFileSync(join(hostDir, 'init.sql'), INIT_SQL);
    for (let attempt = 0; ; attempt++) {
      const port = fixedPort ?? (await freePort());
      const args = serverArgs(s, serverDir, port, durability, performanceSchema);
      const started = spawnServer(s, args, hostDir);
      child = started.proc;
      cancelWatchdog = started.cancelWatchdog;
      const url = `mysql://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`;
      try {
        const versionString = await started.ready(url);
        return handle(s, url, versionString, started, () => spawnServer(s, args, hostDir), hostDir, cleanup);
      } catch (err) {
        const log = existsSync(join(hostDir, 'error.log')) ? readFileSync(join(hostDir, 'error.log'), 'utf8') : '';
        cancelWatchdog();
        await stopProcess(started.proc);
        // A port taken between freePort() and bind: try another once or twice.
        if (/address already in use/i.test(log) && attempt < 3 && fixedPort === undefined) continue;
        throw new Error(`${s.engine} ${s.version} did not start: ${(err as Error).message}\n${log.slice(-3000)}`, { cause: err });
      }
    }
  } catch (err) {
    if (child) await stopProcess(child);
    cancelWatchdog();
    cleanup();
    throw err;
  }
}

/** A spawned server process with its watchdog; `ready` resolves once it answers at `url`. */
interface Spawned {
  readonly proc: ChildProcess;
  readonly cancelWatchdog: () => void;
  ready(url: string): Promise<string>;
}

/** Starts the server process on an initialised data directory, watched by a watchdog. */
function spawnServer(s: InstalledServer, args: string[], hostDir: string): Spawned {
  const proc = s.root ? spawn('chroot', [s.root, s.server, ...args], { stdio: 'ignore' }) : spawn(s.server, args, { stdio: 'ignore' });
  let exited: string | null = null;
  proc.on('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
  if (proc.pid === undefined) throw new Error(`could not spawn ${s.server}`);
  const cancelWatchdog = startWatchdog(proc.pid, hostDir);
  return { proc, cancelWatchdog, ready: (url) => waitForServer(url, 120_000, () => exited) };
}

function handle(
  s: InstalledServer,
  url: string,
  versionString: string,
  first: Spawned,
  respawn: () => Spawned,
  dataDir: string,
  cleanup: () => void,
): ServerHandle {
  let current = first;
  let stopped: Promise<void> | undefined;
  const kill = async (): Promise<void> => {
    const { proc } = current;
    if (proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined) return;
    const gone = new Promise<void>((r) => proc.once('exit', () => r()));
    process.kill(proc.pid, 'SIGKILL');
    await gone;
  };
  return {
    url,
    engine: s.engine,
    version: shortVersion(versionString),
    versionString,
    source: 'local',
    get pid() {
      return current.proc.pid;
    },
    dataDir,
    stop: () =>
      (stopped ??= stopProcess(current.proc).then(() => {
        current.cancelWatchdog();
        cleanup();
      })),
    kill,
    async restart() {
      if (stopped !== undefined) throw new Error(`${s.engine} ${s.version} was stopped; it cannot be restarted`);
      await kill();
      current.cancelWatchdog();
      current = respawn();
      await current.ready(url);
    },
  };
}

/** SIGTERM to the pid the process was started with; SIGKILL if it is still there after 20 s. */
export async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined) return;
  const gone = new Promise<void>((r) => proc.once('exit', () => r()));
  process.kill(proc.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (proc.pid !== undefined && proc.exitCode === null) process.kill(proc.pid, 'SIGKILL');
  }, 20_000);
  await gone;
  clearTimeout(timer);
}
