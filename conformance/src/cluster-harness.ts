import mysql from 'mysql2/promise';
import type { ConformanceHarness, ConformanceTarget, HarnessSession, Probe } from '@taskrow/core/conformance';
import type { ClusterKind, ClusterTarget } from '@taskrow/servers';
import { inject } from 'vitest';

/** The clusters of this run; a cluster test file that gets none MUST fail, not skip. */
export function clusters(): ClusterTarget[] {
  const list = inject('clusters');
  if (!Array.isArray(list) || list.length === 0) throw new Error('no clusters were provided by the cluster global setup');
  return list;
}

/** A kit target that is a cluster: the kit sees one server; the harness spreads sessions over `urls`. */
export interface ClusterConformanceTarget extends ConformanceTarget {
  readonly kind: ClusterKind;
  readonly urls: readonly string[];
}

/**
 * The kit target for a cluster (its `url` is the first node's; `clusterHarness` picks nodes per
 * session). Galera and multi-primary Group Replication are `multiWriterCluster`s: every node takes
 * writes and row locks are per node. Every cluster kind certifies its commits through the group
 * (`certifiedCommits`).
 */
export function clusterConformanceTarget(c: ClusterTarget): ClusterConformanceTarget {
  return {
    engine: c.engine,
    version: c.version,
    url: c.url,
    kind: c.kind,
    urls: c.urls,
    multiWriterCluster: c.kind !== 'group-replication-single-primary',
    certifiedCommits: true,
  };
}

/**
 * The setting that gives a probe session read-your-writes across nodes: a read waits until the node
 * has applied everything the cluster committed before it (Galera: `wsrep_sync_wait`, 1 = reads,
 * 2 = UPDATE/DELETE, 4 = INSERT/REPLACE; Group Replication: `group_replication_consistency`).
 */
export function readYourWritesSql(kind: ClusterKind): string {
  return kind === 'galera' ? 'SET SESSION wsrep_sync_wait = 7' : "SET SESSION group_replication_consistency = 'BEFORE'";
}

/** A probe on its own mysql2 connection to `url`, reading everything the cluster committed before each statement. */
async function clusterProbe(url: string, kind: ClusterKind): Promise<Probe & { end(): Promise<void> }> {
  const conn = await mysql.createConnection(url);
  await conn.query(readYourWritesSql(kind));
  return {
    query: async <Row>(sql: string, params: readonly unknown[] = []) => (await conn.query(sql, [...params]))[0] as Row[],
    end: () => conn.end(),
  };
}

/** `n` split over `k` buckets as evenly as possible, the larger buckets first. */
function split(n: number, k: number): number[] {
  return Array.from({ length: k }, (_, i) => Math.floor(n / k) + (i < n % k ? 1 : 0));
}

/**
 * Wraps an adapter's harness so every session spreads over the cluster's nodes: session `i` puts its
 * taskrow client on node `i`, its probe on node `i + 1` and its extra clients (`openClients`) over
 * every node, starting at node `i + 2`. Writes therefore race across primaries. On single-primary
 * every session (probe included: it plants rows) uses the primary, node 1. A session opened with
 * `oneNode` (the kit's cases about row locks between sessions) keeps its client, probe and extra
 * clients on node `i`. The probe reads with the cluster's read-your-writes setting (see
 * `readYourWritesSql`); the taskrow clients run with the server's defaults.
 */
export function clusterHarness<Tx>(base: ConformanceHarness<Tx>, kindLabel: string): ConformanceHarness<Tx> {
  let opened = 0;
  return {
    adapter: `${base.adapter} on ${kindLabel}`,
    targets: base.targets,
    async open(target, options): Promise<HarnessSession<Tx>> {
      const t = target as ClusterConformanceTarget;
      const n = t.urls.length;
      const i = opened++;
      const single = t.kind === 'group-replication-single-primary';
      const one = single || options.oneNode === true;
      const node = (k: number): string => t.urls[single ? 0 : (i + (one ? 0 : k)) % n]!;
      const session = await base.open({ ...t, url: node(0) }, options);
      // On single-primary the probe writes too (it plants rows), so it stays on the primary.
      const probe = await clusterProbe(node(1), t.kind).catch(async (err) => {
        await session.close();
        throw err;
      });
      return {
        ...session,
        taskrow: session.taskrow,
        probe,
        withDriverTransaction: (outcome, fn) => session.withDriverTransaction(outcome, fn),
        killClientConnections: () => session.killClientConnections(),
        endClient: () => session.endClient(),
        async openClients(count) {
          const parts = split(count, one ? 1 : n);
          const helpers: HarnessSession<Tx>[] = [];
          const opened: { clients: HarnessSession<Tx>['taskrow'][]; close(): Promise<void> }[] = [];
          const closeAll = async (): Promise<void> => {
            await Promise.allSettled(opened.map((o) => o.close()));
            await Promise.allSettled(helpers.map((h) => h.close()));
          };
          try {
            for (const [k, size] of parts.entries()) {
              if (size === 0) continue;
              const helper = await base.open({ ...t, url: node(k + 2) }, options);
              helpers.push(helper);
              opened.push(await helper.openClients(size));
            }
          } catch (err) {
            await closeAll();
            throw err;
          }
          return { clients: opened.flatMap((o) => o.clients), close: closeAll };
        },
        async close() {
          await session.close();
          await probe.end();
        },
      };
    },
  };
}
