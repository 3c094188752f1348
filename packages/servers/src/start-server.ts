import { containerRuntimeAvailable, imageFor, startContainer } from './containers.js';
import { envUrls, envVarName, targetFromEnv } from './env.js';
import { startLocal } from './local.js';
import { installedServers, installerPath, serversCacheDir } from './manifest.js';
import type { ServerHandle, ServerSource, StartServerOptions } from './types.js';
import { compareVersions, versionMatches } from './version.js';

/**
 * Resolves a running server of `engine` (and `version`, when given), trying in order:
 * (a) a URL from the environment (`TASKROW_<ENGINE>_<MAJOR>_<MINOR>_URL`, then `TASKROW_<ENGINE>_URL`);
 * (b) a pinned container image through testcontainers, when a container runtime answers;
 * (c) a server binary installed locally, started on a private data directory and a free loopback port.
 * MUST reject with an error naming all three ways to get a server when none applies, and MUST NOT
 * hand back a server of another engine or version than asked for.
 */
export async function startServer(options: StartServerOptions): Promise<ServerHandle> {
  const { engine, version, durability = 'relaxed' } = options;
  const sources: readonly ServerSource[] = options.sources ?? ['env', 'container', 'local'];
  const why: string[] = [];
  for (const source of sources) {
    if (source === 'env') {
      const names = version ? [envVarName(engine, version), envVarName(engine)] : [envVarName(engine)];
      if (!version)
        names.push(
          ...envUrls()
            .filter((e) => e.engine === engine)
            .map((e) => e.name),
        );
      for (const name of new Set(names)) {
        const url = process.env[name];
        if (!url) continue;
        const target = await targetFromEnv(name, engine, url, name === envVarName(engine, version) ? version : undefined).catch((err: Error) => {
          if (version && name !== envVarName(engine, version)) return undefined; // generic URL, other version
          throw err;
        });
        if (target && versionMatches(target.version, version)) return { ...target, stop: async () => undefined };
      }
      why.push(`no ${names.join(' / ')} in the environment`);
    } else if (source === 'container') {
      const image = imageFor(engine, version);
      if (!image) why.push(`no pinned image for ${engine} ${version}`);
      else if (!(await containerRuntimeAvailable())) why.push('no container runtime answers');
      else return startContainer(engine, image);
    } else {
      const local = installedServers()
        .filter((s) => s.engine === engine && versionMatches(s.version, version))
        .sort((a, b) => compareVersions(b.version, a.version));
      if (local[0]) return startLocal(local[0], durability, options.port);
      why.push(`no local ${engine}${version ? ` ${version}` : ''} in ${serversCacheDir()}/servers.json`);
    }
  }
  throw new Error(
    `no ${engine}${version ? ` ${version}` : ''} server available (${why.join('; ')}). Get one in any of three ways: ` +
      `(a) set ${envVarName(engine, version)}=mysql://user:pass@host:port/db to a server you run; ` +
      `(b) run a container runtime (Docker or Podman) so testcontainers can start one; ` +
      `(c) install local servers as root on Debian: bash ${installerPath}`,
  );
}
