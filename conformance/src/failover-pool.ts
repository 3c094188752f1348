import mysql from 'mysql2/promise';

/**
 * The application-side failover pattern for a cluster with several writable nodes: one mysql2
 * PoolCluster per client, holding a small pool per node, with the client's own node first and the
 * others after it in order. `of('*', 'ORDER')` lends connections from the first node that accepts
 * one: when that node dies, new connections go to the next; `restoreNodeTimeout` tries the dead
 * node again after `restoreMs`, so clients return once it has rejoined. taskrow takes the namespace
 * like a pool (`query` + `getConnection`) and sees only connections, never nodes.
 */
export function failoverPool(urls: readonly string[], first: number, options: { connectionLimit?: number; restoreMs?: number } = {}) {
  const cluster = mysql.createPoolCluster({ canRetry: true, removeNodeErrorCount: 1, restoreNodeTimeout: options.restoreMs ?? 1000, defaultSelector: 'ORDER' });
  for (let k = 0; k < urls.length; k++) {
    const i = (first + k) % urls.length;
    cluster.add(`node${i + 1}`, { uri: urls[i]!, connectionLimit: options.connectionLimit ?? 2, connectTimeout: 2000 });
  }
  return { pool: cluster.of('*', 'ORDER'), end: () => cluster.end() };
}
