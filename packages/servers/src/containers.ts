import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Engine, ServerHandle } from './types.js';
import { shortVersion, versionMatches } from './version.js';
import { readVersion } from './probe.js';

/** The pinned images, newest first per engine. */
export const CONTAINER_IMAGES: Readonly<Record<Engine, readonly string[]>> = {
  mysql: ['mysql:8.4', 'mysql:8.0'],
  mariadb: ['mariadb:11.8', 'mariadb:10.11'],
};

/** Cheap check before loading testcontainers: is any container runtime configured at all? */
function runtimeConfigured(): boolean {
  return Boolean(
    process.env['DOCKER_HOST'] ||
      process.env['TESTCONTAINERS_HOST_OVERRIDE'] ||
      existsSync('/var/run/docker.sock') ||
      existsSync(join(homedir(), '.testcontainers.properties')) ||
      existsSync(join(homedir(), '.docker', 'run', 'docker.sock')),
  );
}

/** True when a container runtime answers; fast (no network) when none is configured. */
export async function containerRuntimeAvailable(): Promise<boolean> {
  if (!runtimeConfigured()) return false;
  try {
    const tc = await import('testcontainers');
    await tc.getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/** The pinned image for `engine` and `version`, or undefined when none is pinned for it. */
export function imageFor(engine: Engine, version?: string): string | undefined {
  return CONTAINER_IMAGES[engine].find((img) => versionMatches(img.split(':')[1]!, version) || versionMatches(version ?? '', img.split(':')[1]));
}

/** Starts a pinned image with testcontainers. Callers check `containerRuntimeAvailable()` first. */
export async function startContainer(engine: Engine, image: string): Promise<ServerHandle> {
  const { MySqlContainer } = await import('@testcontainers/mysql');
  const { MariaDbContainer } = await import('@testcontainers/mariadb');
  const base = engine === 'mysql' ? new MySqlContainer(image) : new MariaDbContainer(image);
  const started = await base
    .withDatabase('taskrow')
    .withUsername('taskrow')
    .withUserPassword('taskrow')
    .withCommand(['--max-connections=4000', '--innodb-flush-log-at-trx-commit=0', '--character-set-server=utf8mb4'])
    .start();
  const url = `mysql://taskrow:taskrow@${started.getHost()}:${started.getMappedPort(3306)}/taskrow`;
  const versionString = await readVersion(url);
  let stopped: Promise<void> | undefined;
  return {
    url,
    engine,
    version: shortVersion(versionString),
    versionString,
    source: 'container',
    stop: () => (stopped ??= started.stop().then(() => undefined)),
  };
}
