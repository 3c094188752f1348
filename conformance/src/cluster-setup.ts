import type { TestProject } from 'vitest/node';
import { CLUSTER_KINDS, clusterTarget, startCluster, type ClusterKind, type ClusterTarget } from '@taskrow/servers';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Every cluster this run tests against. */
    clusters: ClusterTarget[];
  }
}

/** The clusters a run starts: `TASKROW_CLUSTERS` (comma-separated kinds), default Galera and multi-primary Group Replication. */
export function wantedClusters(env: NodeJS.ProcessEnv = process.env): ClusterKind[] {
  const raw = env['TASKROW_CLUSTERS']
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean) ?? ['galera', 'group-replication'];
  const unknown = raw.filter((k) => !CLUSTER_KINDS.includes(k as ClusterKind));
  if (unknown.length > 0) throw new Error(`TASKROW_CLUSTERS: unknown kind(s) ${unknown.join(', ')}; accepted: ${CLUSTER_KINDS.join(', ')}`);
  return raw as ClusterKind[];
}

/**
 * Starts every wanted cluster once per run (in parallel) and provides them to the cluster project.
 * Every session reads what the cluster committed before it (`readYourWrites`: Galera `wsrep_sync_wait=1`,
 * Group Replication `group_replication_consistency=BEFORE`), as an application reading on one node
 * what it wrote through another must set. A cluster that does not start fails the run, under CI and
 * off it: this project exists to test them.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const t0 = performance.now();
  const settled = await Promise.allSettled(wantedClusters().map((kind) => startCluster({ kind, readYourWrites: true })));
  const handles = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stopAll = async (): Promise<void> => void (await Promise.allSettled(handles.map((h) => h.stop())));
  const failed = settled.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).message ?? r.reason)] : []));
  if (failed.length > 0) {
    await stopAll();
    throw new Error(`clusters failed to start:\n${failed.join('\n')}`);
  }
  const lines = handles.map(
    (h) => `  ${h.kind}: ${h.engine} ${h.version} (${h.versionString}), nodes on ports ${h.urls.map((u) => new URL(u).port).join(', ')}`,
  );
  process.stderr.write(
    `taskrow: testing against ${handles.length} cluster(s), started in ${((performance.now() - t0) / 1000).toFixed(1)} s:\n${lines.join('\n')}\n`,
  );
  project.provide('clusters', handles.map(clusterTarget));
  return stopAll;
}
