import { existsSync, readFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import type { ClusterTarget } from '@taskrow/servers';

/** Runs `sql` on its own connection to `url` (10 s to connect, 10 s for the statement). */
export async function on<Row = mysql.RowDataPacket>(url: string, sql: string, params: unknown[] = []): Promise<Row[]> {
  const conn = await mysql.createConnection({ uri: url, connectTimeout: 10_000 });
  try {
    return (await conn.query({ sql, timeout: 10_000 }, params))[0] as Row[];
  } finally {
    await conn.end().catch(() => undefined);
  }
}

/** What node `url` says of its membership: `ok` when it is a full member of a 3-node cluster. */
async function membership(c: ClusterTarget, url: string): Promise<{ ok: boolean; said: string }> {
  if (c.kind === 'galera') {
    const rows = await on(url, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_size', 'wsrep_local_state_comment', 'wsrep_cluster_status')");
    const st = Object.fromEntries(rows.map((r) => [String(r['Variable_name']), String(r['Value'])]));
    const ok = st['wsrep_cluster_size'] === '3' && st['wsrep_local_state_comment'] === 'Synced' && st['wsrep_cluster_status'] === 'Primary';
    return { ok, said: `size ${st['wsrep_cluster_size']}, ${st['wsrep_local_state_comment']}, ${st['wsrep_cluster_status']}` };
  }
  const rows = await on(url, 'SELECT member_port AS p, member_state AS s FROM performance_schema.replication_group_members ORDER BY member_port');
  const ok = rows.length === 3 && rows.every((r) => r['s'] === 'ONLINE');
  return { ok, said: rows.map((r) => `${String(r['p'])} ${String(r['s'])}`).join(', ') || 'no members' };
}

/** How many of a failing node's last error-log lines a problem quotes. */
const LOG_LINES = 4;

/**
 * The last `LOG_LINES` lines of node `i`'s error log that report an error, a warning, a crash or
 * a shutdown (the log is on this host; a node whose server died says why only there).
 */
function errorLogTail(c: ClusterTarget, i: number): string[] {
  const file = c.errorLogs[i];
  if (file === undefined || !existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').split('\n');
  return lines
    .filter((l) => /\[ERROR\]|\[Warning\]|got signal|Assertion|Starting shutdown|Shutdown complete/i.test(l))
    .slice(-LOG_LINES)
    .map((l) => l.slice(0, 200));
}

/** The node's last replication errors from its error log (MySQL's performance_schema.error_log). */
async function replicationErrors(c: ClusterTarget, url: string): Promise<string[]> {
  if (c.kind === 'galera') return [];
  const rows = await on(
    url,
    "SELECT error_code AS e, data AS d FROM performance_schema.error_log WHERE prio = 'Error' AND subsystem = 'Repl' ORDER BY logged DESC LIMIT 3",
  );
  return rows.map((r) => `${String(r['e'])} ${String(r['d']).slice(0, 160)}`);
}

const logSays = (c: ClusterTarget, i: number): string => {
  const tail = errorLogTail(c, i);
  return tail.length > 0 ? `; its error log: ${tail.join(' | ')}` : '';
};

/**
 * Every node's view of the cluster: an empty list when each node answers and is a full member of
 * the 3-node cluster, else one line per node that is not (with its view, or why it did not
 * answer, its last replication errors and the last error lines of its log), so a test that fails
 * on a broken cluster says so.
 */
export async function clusterProblems(c: ClusterTarget): Promise<string[]> {
  const problems: string[] = [];
  for (const [i, url] of c.urls.entries()) {
    try {
      const m = await membership(c, url);
      if (m.ok) continue;
      const errors = await replicationErrors(c, url).catch(() => []);
      problems.push(`node ${i + 1}: ${m.said}${errors.length > 0 ? `; last errors: ${errors.join(' | ')}` : ''}${logSays(c, i)}`);
    } catch (err) {
      problems.push(`node ${i + 1} did not answer: ${err instanceof Error ? err.message : String(err)}${logSays(c, i)}`);
    }
  }
  return problems;
}

/**
 * A case to register after a cluster's kit: the kit is only evidence while the cluster it ran on
 * stayed whole, so a node that left (or stopped answering) during the run is named here, with its
 * view and its last replication errors.
 */
export function describeClusterStaysWhole(c: ClusterTarget): void {
  describe(`${c.kind} · after the kit`, () => {
    it('every node is still a full member of the cluster', async () => {
      const problems = await clusterProblems(c);
      expect(problems, `the cluster did not stay whole: ${problems.join(' || ')}`).toEqual([]);
    });
  });
}
