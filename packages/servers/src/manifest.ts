import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Engine } from './types.js';

/** One server binary the installer put in place. */
export interface InstalledServer {
  readonly engine: Engine;
  /** `major.minor.patch` the binary reports. */
  readonly version: string;
  /** A Debian root the server runs chrooted in, or null for the host's own binary. */
  readonly root: string | null;
  /** Path of `mysqld` / `mariadbd`, inside `root` when there is one. */
  readonly server: string;
  /** Path of `mariadb-install-db`, or null for MySQL (which initialises with `--initialize-insecure`). */
  readonly installDb: string | null;
}

/** The folder the installer caches roots in: `TASKROW_SERVERS_CACHE` or `~/.cache/taskrow/servers`. */
export function serversCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['TASKROW_SERVERS_CACHE'] || join(homedir(), '.cache', 'taskrow', 'servers');
}

/** The installer script shipped with this package. */
export const installerPath = new URL('../scripts/install-servers.sh', import.meta.url).pathname;

/**
 * Servers the installer registered in `<cache>/servers.json` whose binaries are still present.
 * Returns [] when nothing was installed; never throws for a missing manifest.
 */
export function installedServers(cacheDir = serversCacheDir()): InstalledServer[] {
  const file = join(cacheDir, 'servers.json');
  if (!existsSync(file)) return [];
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { servers?: InstalledServer[] };
  return (parsed.servers ?? []).filter((s) => existsSync(join(s.root ?? '/', s.server)));
}
