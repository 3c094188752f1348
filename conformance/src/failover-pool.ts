import mysql from 'mysql2/promise';

/**
 * True when the node at `url` accepts writes as a cluster member: not read-only (a recovering Group
 * Replication member is `super_read_only`), and on Galera `wsrep_ready` is ON (a joining node
 * answers 1047 until it is). Any failure to ask reads as not ready.
 */
export async function nodeReady(url: string): Promise<boolean> {
  const conn = await mysql.createConnection({ uri: url, connectTimeout: 1000 }).catch(() => undefined);
  if (!conn) return false;
  try {
    const [ro] = await conn.query<mysql.RowDataPacket[]>('SELECT @@global.read_only AS ro');
    if (Number(ro[0]?.['ro']) !== 0) return false;
    const [wsrep] = await conn.query<mysql.RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'wsrep_ready'");
    return wsrep.length === 0 || String(wsrep[0]!['Value']) === 'ON';
  } catch {
    return false;
  } finally {
    await conn.end().catch(() => undefined);
  }
}

/**
 * The application-side failover pattern for a cluster with several writable nodes: one mysql2
 * PoolCluster per client, holding a small pool per node, with the client's own node first and the
 * others after it in order. `of('*', 'ORDER')` lends connections from the first node in the list:
 * a node that refuses a connection is removed at once (`restoreNodeTimeout: 0`), so new connections
 * go to the next; a health check every `checkMs` adds it back (at the end of the list) once it
 * reports itself ready to write (`nodeReady`), never while it is still joining or recovering.
 * taskrow takes the namespace like a pool (`query` + `getConnection`) and sees only connections,
 * never nodes.
 */
export function failoverPool(urls: readonly string[], first: number, options: { connectionLimit?: number; checkMs?: number } = {}) {
  const cluster = mysql.createPoolCluster({ canRetry: true, removeNodeErrorCount: 1, restoreNodeTimeout: 0, defaultSelector: 'ORDER' });
  const config = (url: string): mysql.PoolOptions => ({ uri: url, connectionLimit: options.connectionLimit ?? 2, connectTimeout: 2000 });
  const byId = new Map<string, string>();
  for (let k = 0; k < urls.length; k++) {
    const i = (first + k) % urls.length;
    byId.set(`node${i + 1}`, urls[i]!);
    cluster.add(`node${i + 1}`, config(urls[i]!));
  }
  const removed = new Set<string>();
  let ended = false;
  cluster.on('remove', (id: string) => void removed.add(id));
  const check = async (): Promise<void> => {
    for (const id of [...removed]) {
      if (ended || !(await nodeReady(byId.get(id)!))) continue;
      removed.delete(id);
      if (!ended) cluster.add(id, config(byId.get(id)!));
    }
  };
  let checking = Promise.resolve();
  const timer = setInterval(() => void (checking = checking.then(check)), options.checkMs ?? 500);
  return {
    pool: cluster.of('*', 'ORDER'),
    end: async () => {
      ended = true;
      clearInterval(timer);
      await checking;
      await cluster.end();
    },
  };
}
