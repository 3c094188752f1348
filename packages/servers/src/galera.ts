import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterHandle } from './cluster-types.js';
import {
  killNodeRun,
  makeNodeDir,
  nodeInitSql,
  nodeLog,
  nodeQuery,
  nodeUrl,
  pollUntil,
  runNode,
  runningPids,
  stopRun,
  type NodeDir,
  type NodeRun,
} from './cluster-node.js';
import { initialise, serverArgs } from './local.js';
import { lowFreePorts } from './ports.js';
import type { InstalledServer } from './manifest.js';
import type { Durability } from './types.js';
import { shortVersion } from './version.js';

/** Where Debian's `galera-4` package puts the provider. */
export const GALERA_PROVIDER = '/usr/lib/galera/libgalera_smm.so';
const NODES = 3;

interface GaleraNode {
  readonly dir: NodeDir;
  readonly port: number;
  readonly gcomm: number;
  readonly ist: number;
  readonly sst: number;
  run?: NodeRun;
}

/** The wsrep flags of node `n`: loopback addresses, ROW binlog format, interleaved auto-increment. */
function wsrepArgs(nodes: readonly GaleraNode[], n: GaleraNode, cluster: string): string[] {
  return [
    '--wsrep-on=ON',
    `--wsrep-provider=${GALERA_PROVIDER}`,
    `--wsrep-cluster-name=${cluster}`,
    `--wsrep-cluster-address=gcomm://${nodes.map((x) => `127.0.0.1:${x.gcomm}`).join(',')}`,
    `--wsrep-node-address=127.0.0.1:${n.gcomm}`,
    `--wsrep-node-incoming-address=127.0.0.1:${n.port}`,
    `--wsrep-node-name=node${nodes.indexOf(n) + 1}`,
    `--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:${n.gcomm};ist.recv_addr=127.0.0.1:${n.ist};gcache.size=256M`,
    // A new node receives a full copy by rsync (SST); a node back from a crash catches up from a
    // donor's gcache (IST) when it can.
    '--wsrep-sst-method=rsync',
    `--wsrep-sst-receive-address=127.0.0.1:${n.sst}`,
    '--wsrep-slave-threads=2',
    '--binlog-format=ROW',
    '--innodb-autoinc-lock-mode=2',
  ];
}

/**
 * Prepares a node's data directory: node 1 gets `mariadb-install-db` and the account (created
 * locally, `wsrep_on=OFF`); nodes 2 and 3 start empty and receive node 1's state by SST (rsync).
 */
function prepare(s: InstalledServer, n: GaleraNode, first: boolean): void {
  if (first) initialise(s, n.dir.server);
  else mkdirSync(join(n.dir.host, 'data'));
  writeFileSync(join(n.dir.host, 'init.sql'), nodeInitSql('SET SESSION wsrep_on=OFF;'));
}

async function status(url: string): Promise<Record<string, string>> {
  const rows = await nodeQuery<{ Variable_name: string; Value: string }>(url, "SHOW GLOBAL STATUS LIKE 'wsrep\\_%'");
  return Object.fromEntries(rows.map((r) => [r.Variable_name.toLowerCase(), r.Value]));
}

/** Resolves once node `n` is Synced in a primary component of `size` nodes; rejects with its log's tail. */
async function waitSynced(n: GaleraNode, size: number): Promise<void> {
  let last: Record<string, string> = {};
  await pollUntil(`galera node on port ${n.port} synced in a cluster of ${size}`, 120_000, async () => {
    last = await status(nodeUrl(n.port));
    return last['wsrep_ready'] === 'ON' && last['wsrep_local_state_comment'] === 'Synced' && Number(last['wsrep_cluster_size']) === size;
  }).catch((err: Error) => {
    const st = ['wsrep_ready', 'wsrep_local_state_comment', 'wsrep_cluster_size', 'wsrep_cluster_status'].map((k) => `${k}=${last[k]}`).join(' ');
    throw new Error(nodeLog(n.dir, `${err.message}; last status: ${st}`), { cause: err });
  });
}

/** The position InnoDB recovered after a crash (`mariadbd --wsrep-recover`), as `uuid:seqno`. */
function recoverPosition(s: InstalledServer, args: string[], n: GaleraNode): string {
  const res = spawnSync(s.server, [...args, '--wsrep-recover'], { encoding: 'utf8', timeout: 120_000 });
  const log = readFileSync(join(n.dir.host, 'error.log'), 'utf8');
  const found = [...log.matchAll(/Recovered position: ([0-9a-f-]{36}:-?\d+)/g)].pop();
  if (!found?.[1]) throw new Error(nodeLog(n.dir, `mariadbd --wsrep-recover found no position (exit ${res.status})`));
  return found[1];
}

/**
 * Starts a 3-node MariaDB Galera cluster on loopback: node 1 bootstraps (`--wsrep-new-cluster`),
 * nodes 2 and 3 join; resolves once all three are Synced. Needs the `galera-4` package.
 */
export async function startGalera(s: InstalledServer, durability: Durability, sstScripts: string, readYourWrites: boolean): Promise<ClusterHandle> {
  // mariadbd runs the state transfer scripts (wsrep_sst_rsync) from its PATH.
  const env = { ...process.env, PATH: `${sstScripts}:${process.env['PATH'] ?? '/usr/bin:/bin'}` };
  const ports = await lowFreePorts(NODES * 4);
  const nodes: GaleraNode[] = Array.from({ length: NODES }, (_, i) => ({
    dir: makeNodeDir(s, `galera-n${i + 1}`),
    port: ports[i * 4]!,
    gcomm: ports[i * 4 + 1]!,
    ist: ports[i * 4 + 2]!,
    sst: ports[i * 4 + 3]!,
  }));
  const cluster = `taskrow-${randomUUID().slice(0, 8)}`;
  const args = (n: GaleraNode): string[] => [
    ...serverArgs(s, n.dir.server, n.port, durability),
    ...wsrepArgs(nodes, n, cluster),
    ...(readYourWrites ? ['--wsrep-sync-wait=1'] : []),
  ];
  const stop = async (): Promise<void> => {
    await Promise.allSettled(nodes.map((n) => stopRun(n.run, n.dir)));
  };
  try {
    for (const n of nodes) prepare(s, n, n === nodes[0]);
    for (const [i, n] of nodes.entries()) {
      n.run = await runNode(s, n.dir, i === 0 ? [...args(n), '--wsrep-new-cluster'] : args(n), nodeUrl(n.port), env);
      await waitSynced(n, i + 1);
    }
    const versionString = (await nodeQuery<{ v: string }>(nodeUrl(nodes[0]!.port), 'SELECT VERSION() AS v'))[0]!.v;
    const urls = nodes.map((n) => nodeUrl(n.port));
    let stopped: Promise<void> | undefined;
    return {
      kind: 'galera',
      engine: 'mariadb',
      version: shortVersion(versionString),
      versionString,
      source: 'local',
      url: urls[0]!,
      urls,
      errorLogs: nodes.map((n) => join(n.dir.host, 'error.log')),
      pids: () => runningPids(nodes),
      killNode: (i) => killNodeRun(nodes[i]!),
      async restartNode(i) {
        const n = nodes[i]!;
        if (n.run) throw new Error(`galera node ${i + 1} is running`);
        const position = recoverPosition(s, args(n), n);
        n.run = await runNode(s, n.dir, [...args(n), `--wsrep-start-position=${position}`], urls[i]!, env);
        await waitSynced(n, NODES);
      },
      stop: () => (stopped ??= stop()),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
