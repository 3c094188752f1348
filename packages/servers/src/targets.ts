import { containerRuntimeAvailable, CONTAINER_IMAGES, startContainer } from './containers.js';
import { envUrls, targetFromEnv } from './env.js';
import { startLocal } from './local.js';
import { installedServers, installerPath } from './manifest.js';
import type { Durability, Engine, ServerHandle, ServerTarget } from './types.js';
import { versionMatches } from './version.js';

/** The local servers CI requires: the installer's three. */
export const REQUIRED_LOCAL: readonly { engine: Engine; version: string }[] = [
  { engine: 'mysql', version: '9.7' },
  { engine: 'mariadb', version: '10.11' },
  { engine: 'mariadb', version: '11.8' },
];

/** Every server a test run uses, and how to stop the ones it started. */
export interface TargetSet {
  readonly targets: readonly ServerTarget[];
  readonly mode: 'env' | 'container' | 'local';
  stopAll(): Promise<void>;
}

/**
 * Starts every available server once, in parallel: the URLs in the environment when any is set
 * (and nothing else); otherwise every pinned image when a container runtime answers; otherwise
 * every locally installed server. With `requireAll` (CI), a local run with fewer than the three
 * `REQUIRED_LOCAL` servers MUST reject, never skip; any run with no server at all rejects.
 * `performanceSchema` turns statement instrumentation on in the local servers it starts (see
 * `serverArgs`).
 */
export async function startTargets(options: { requireAll: boolean; durability?: Durability; performanceSchema?: boolean }): Promise<TargetSet> {
  const durability = options.durability ?? 'relaxed';
  const fromEnv = envUrls();
  if (fromEnv.length > 0) {
    const targets = await Promise.all(fromEnv.map((e) => targetFromEnv(e.name, e.engine, e.url, versionOfName(e.name))));
    return { targets, mode: 'env', stopAll: async () => undefined };
  }
  let starts: Promise<ServerHandle>[];
  let mode: TargetSet['mode'];
  if (await containerRuntimeAvailable()) {
    mode = 'container';
    starts = (Object.keys(CONTAINER_IMAGES) as Engine[]).flatMap((engine) => CONTAINER_IMAGES[engine].map((img) => startContainer(engine, img)));
  } else {
    mode = 'local';
    const installed = installedServers();
    if (options.requireAll) {
      const missing = REQUIRED_LOCAL.filter((r) => !installed.some((s) => s.engine === r.engine && versionMatches(s.version, r.version)));
      if (missing.length > 0) {
        throw new Error(
          `CI needs ${REQUIRED_LOCAL.map((r) => `${r.engine} ${r.version}`).join(', ')}; missing: ` +
            `${missing.map((r) => `${r.engine} ${r.version}`).join(', ')}. Install them: bash ${installerPath}`,
        );
      }
    }
    starts = installed.map((s) => startLocal(s, durability, undefined, options.performanceSchema === true));
  }
  const settled = await Promise.allSettled(starts);
  const handles = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stopAll = async (): Promise<void> => {
    await Promise.allSettled(handles.map((h) => h.stop()));
  };
  const failed = settled.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message ?? r.reason)] : []));
  if (failed.length > 0 && (options.requireAll || handles.length === 0)) {
    await stopAll();
    throw new Error(`servers failed to start:\n${failed.join('\n')}`);
  }
  if (handles.length === 0) {
    throw new Error(
      'no database server for the tests. Set TASKROW_MYSQL_URL / TASKROW_MARIADB_URL to your own servers, ' +
        `run a container runtime for testcontainers, or install local servers: bash ${installerPath}`,
    );
  }
  const targets = handles.map(({ url, engine, version, versionString, source }) => ({ url, engine, version, versionString, source }));
  return { targets, mode, stopAll };
}

function versionOfName(name: string): string | undefined {
  const m = /_(\d+)_(\d+)_URL$/.exec(name);
  return m ? `${m[1]}.${m[2]}` : undefined;
}
