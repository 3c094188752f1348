import { randomUUID } from 'node:crypto';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterHandle } from './cluster-types.js';
import {
  killNodeRun,
  makeNodeDir,
  nodeInitSql,
  nodeLog,
  nodeQuery,
  nodeUrl,
  NODE_PASSWORD,
  NODE_USER,
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

const NODES = 3;

interface GrNode {
  readonly dir: NodeDir;
  readonly port: number;
  /** XCom (group communication) port. */
  readonly xcom: number;
  run?: NodeRun;
}

/** The Group Replication flags of node `n` (the plugin ships with MySQL as group_replication.so). */
function grArgs(nodes: readonly GrNode[], n: GrNode, group: string, singlePrimary: boolean): string[] {
  const id = nodes.indexOf(n) + 1;
  return [
    `--server-id=${id}`,
    '--gtid-mode=ON',
    '--enforce-gtid-consistency=ON',
    `--log-bin=${n.dir.server}/binlog`,
    `--report-host=127.0.0.1`,
    `--report-port=${n.port}`,
    '--plugin-load-add=group_replication.so',
    `--group-replication-group-name=${group}`,
    '--group-replication-start-on-boot=OFF',
    `--group-replication-local-address=127.0.0.1:${n.xcom}`,
    `--group-replication-group-seeds=${nodes.map((x) => `127.0.0.1:${x.xcom}`).join(',')}`,
    '--group-replication-ip-allowlist=127.0.0.1/8',
    `--group-replication-single-primary-mode=${singlePrimary ? 'ON' : 'OFF'}`,
    `--group-replication-enforce-update-everywhere-checks=${singlePrimary ? 'OFF' : 'ON'}`,
    // A loaded 2-core machine stalls a member for seconds at a time: neither its redo log (the
    // kit's million-row cases fill the default 100 MB, and writes wait for the checkpoint) nor a
    // missed heartbeat (expelled after 5 s by default) may take it out of the group.
    '--innodb-redo-log-capacity=512M',
    '--group-replication-member-expel-timeout=30',
    // Distributed recovery logs in as the taskrow account (caching_sha2_password) over TLS.
    '--group-replication-recovery-use-ssl=ON',
    '--group-replication-recovery-get-public-key=ON',
  ];
}

/** Every member's state, as performance_schema reports it on `url`. */
async function members(url: string): Promise<{ port: number; state: string; role: string }[]> {
  const rows = await nodeQuery<{ p: number; s: string; r: string }>(
    url,
    'SELECT member_port AS p, member_state AS s, member_role AS r FROM performance_schema.replication_group_members',
  );
  return rows.map((r) => ({ port: Number(r.p), state: r.s, role: r.r }));
}

/** Resolves once `n` sees `size` ONLINE members; rejects with the last view and the tail of its error log. */
async function waitOnline(n: GrNode, size: number): Promise<void> {
  let last: { port: number; state: string }[] = [];
  await pollUntil(`group replication member on port ${n.port} sees ${size} ONLINE`, 180_000, async () => {
    last = await members(nodeUrl(n.port));
    return last.length === size && last.every((x) => x.state === 'ONLINE');
  }).catch((err: Error) => {
    throw new Error(nodeLog(n.dir, `${err.message}; last view: ${last.map((m) => `${m.port} ${m.state}`).join(', ') || 'none'}`), { cause: err });
  });
}

const START = `START GROUP_REPLICATION USER='${NODE_USER}', PASSWORD='${NODE_PASSWORD}'`;

/**
 * Starts a 3-node MySQL Group Replication cluster on loopback, multi-primary unless `singlePrimary`:
 * node 1 bootstraps the group, nodes 2 and 3 join; resolves once all three are ONLINE.
 */
export async function startGroupReplication(
  s: InstalledServer,
  durability: Durability,
  singlePrimary: boolean,
  readYourWrites: boolean,
): Promise<ClusterHandle> {
  const ports = await lowFreePorts(NODES * 2);
  const nodes: GrNode[] = Array.from({ length: NODES }, (_, i) => ({
    dir: makeNodeDir(s, `gr-n${i + 1}`),
    port: ports[i * 2]!,
    xcom: ports[i * 2 + 1]!,
  }));
  const group = randomUUID();
  const args = (n: GrNode): string[] => [
    ...serverArgs(s, n.dir.server, n.port, durability).filter((a) => a !== '--skip-log-bin'),
    ...grArgs(nodes, n, group, singlePrimary),
    ...(readYourWrites ? ['--group-replication-consistency=BEFORE'] : []),
  ];
  const stop = async (): Promise<void> => {
    await Promise.allSettled(nodes.map((n) => stopRun(n.run, n.dir)));
  };
  try {
    // One --initialize-insecure (about 3 s), copied: each copy gets its own server_uuid (auto.cnf removed).
    initialise(s, nodes[0]!.dir.server);
    for (const n of nodes) {
      if (n !== nodes[0]) cpSync(join(nodes[0]!.dir.host, 'data'), join(n.dir.host, 'data'), { recursive: true });
      rmSync(join(n.dir.host, 'data', 'auto.cnf'), { force: true });
      writeFileSync(join(n.dir.host, 'init.sql'), nodeInitSql('SET sql_log_bin = 0;'));
    }
    await Promise.all(nodes.map(async (n) => (n.run = await runNode(s, n.dir, args(n), nodeUrl(n.port)))));
    const urls = nodes.map((n) => nodeUrl(n.port));
    await nodeQuery(urls[0]!, 'SET GLOBAL group_replication_bootstrap_group = ON');
    await nodeQuery(urls[0]!, START);
    await nodeQuery(urls[0]!, 'SET GLOBAL group_replication_bootstrap_group = OFF');
    for (const url of urls.slice(1)) await nodeQuery(url, START);
    await waitOnline(nodes[0]!, NODES);
    const versionString = (await nodeQuery<{ v: string }>(urls[0]!, 'SELECT VERSION() AS v'))[0]!.v;
    let stopped: Promise<void> | undefined;
    return {
      kind: singlePrimary ? 'group-replication-single-primary' : 'group-replication',
      engine: 'mysql',
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
        if (n.run) throw new Error(`group replication node ${i + 1} is running`);
        n.run = await runNode(s, n.dir, args(n), urls[i]!);
        await nodeQuery(urls[i]!, START);
        await waitOnline(n, NODES);
      },
      stop: () => (stopped ??= stop()),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
