import type { ClusterHandle, ClusterKind, ClusterTarget, StartClusterOptions } from './cluster-types.js';
import { existsSync } from 'node:fs';
import { GALERA_PROVIDER, startGalera } from './galera.js';
import { startGroupReplication } from './group-replication.js';
import { join } from 'node:path';
import { installedServers, installerPath, serversCacheDir } from './manifest.js';
import { compareVersions, versionMatches } from './version.js';

/** The server each cluster kind is built from: MariaDB 10.11 (host) for Galera, MySQL 9.7 for Group Replication. */
const CLUSTER_SERVER: Record<ClusterKind, { engine: 'mysql' | 'mariadb'; version: string }> = {
  galera: { engine: 'mariadb', version: '10.11' },
  'group-replication': { engine: 'mysql', version: '9.7' },
  'group-replication-single-primary': { engine: 'mysql', version: '9.7' },
};

/** Every cluster kind, in the order test runs list them. */
export const CLUSTER_KINDS: readonly ClusterKind[] = ['galera', 'group-replication', 'group-replication-single-primary'];

/**
 * Starts a 3-node cluster of `kind` from the locally installed servers, each node on its own data
 * directory and loopback ports below the ephemeral range, and resolves once every node is a synced
 * member. Nodes are stopped by pid; a watchdog per node stops it and removes its data directory if
 * this process dies first. MUST reject, naming the installer, when the server or the Galera
 * provider is not installed; MUST NOT leave a node running when it rejects.
 */
export async function startCluster(options: StartClusterOptions): Promise<ClusterHandle> {
  const { kind, durability = 'relaxed', readYourWrites = false } = options;
  const want = CLUSTER_SERVER[kind];
  if (!want) throw new Error(`unknown cluster kind ${String(kind)}; accepted: ${CLUSTER_KINDS.join(', ')}`);
  const server = installedServers()
    .filter((s) => s.engine === want.engine && versionMatches(s.version, want.version) && (kind !== 'galera' || s.root === null))
    .sort((a, b) => compareVersions(b.version, a.version))[0];
  if (!server) throw new Error(`a ${kind} cluster needs a local ${want.engine} ${want.version}; install it: bash ${installerPath}`);
  if (kind === 'galera') {
    if (!existsSync(GALERA_PROVIDER)) throw new Error(`a galera cluster needs ${GALERA_PROVIDER} (Debian package galera-4); install it: bash ${installerPath}`);
    return startGalera(server, durability, galeraSstScripts(), readYourWrites);
  }
  return startGroupReplication(server, durability, kind === 'group-replication-single-primary', readYourWrites);
}

/**
 * The folder holding MariaDB's state transfer scripts (`wsrep_sst_rsync`, `wsrep_sst_common`), which
 * the installer takes from Debian's `mariadb-server` package without installing that package (it
 * would start a system server). Throws, naming the installer, when they are missing.
 */
function galeraSstScripts(): string {
  const dir = join(serversCacheDir(), 'galera', 'bin');
  if (!existsSync(join(dir, 'wsrep_sst_rsync'))) throw new Error(`a galera cluster needs ${dir}/wsrep_sst_rsync; install it: bash ${installerPath}`);
  return dir;
}

/** The serialisable part of a cluster handle, for test projects. */
export function clusterTarget(h: ClusterHandle): ClusterTarget {
  const { kind, engine, version, versionString, source, url, urls, errorLogs } = h;
  return { kind, engine, version, versionString, source, url, urls, errorLogs };
}
