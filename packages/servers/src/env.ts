import type { Engine, ServerTarget } from './types.js';
import { engineOf, shortVersion, versionMatches } from './version.js';
import { readVersion, redact } from './probe.js';

const ENV_NAME = /^TASKROW_(MYSQL|MARIADB)(?:_(\d+)_(\d+))?_URL$/;

/** The variable holding a URL for one engine and version: `TASKROW_MARIADB_10_11_URL`, `TASKROW_MYSQL_URL`. */
export function envVarName(engine: Engine, version?: string): string {
  const v = version ? `_${version.split('.').slice(0, 2).join('_')}` : '';
  return `TASKROW_${engine.toUpperCase()}${v}_URL`;
}

/** Every `TASKROW_<ENGINE>[_<MAJOR>_<MINOR>]_URL` set in `env`, sorted by name. */
export function envUrls(env: NodeJS.ProcessEnv = process.env): { name: string; engine: Engine; url: string }[] {
  const found: { name: string; engine: Engine; url: string }[] = [];
  for (const [name, url] of Object.entries(env)) {
    const m = ENV_NAME.exec(name);
    if (m && url) found.push({ name, engine: m[1]!.toLowerCase() as Engine, url });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Connects to a URL taken from the environment and checks that it is the engine (and version) the
 * variable promises. MUST fail with the variable's name when the server disagrees, never silently
 * test against the wrong server.
 */
export async function targetFromEnv(name: string, engine: Engine, url: string, version?: string): Promise<ServerTarget> {
  let versionString: string;
  try {
    versionString = await readVersion(url);
  } catch (err) {
    throw new Error(`${name}=${redact(url)}: cannot connect: ${(err as Error).message}`, { cause: err });
  }
  const actual = engineOf(versionString);
  const v = shortVersion(versionString);
  if (actual !== engine) throw new Error(`${name} points at ${actual} ${v}, not ${engine}`);
  if (!versionMatches(v, version)) throw new Error(`${name} points at ${engine} ${v}, not ${version}`);
  return { engine, version: v, versionString, url, source: 'env' };
}
