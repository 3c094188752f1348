import mysql from 'mysql2/promise';
import type { ConformanceHarness, ConformanceTarget, HarnessSession, Probe } from '@taskrow/core/conformance';
import { taskrow, type Mysql2Connection } from '@taskrow/mysql2';
import { openEach } from './shared.js';

/** A probe on its own plain mysql2 connection. */
export async function mysql2Probe(url: string): Promise<Probe & { end(): Promise<void> }> {
  const conn = await mysql.createConnection(url);
  return {
    query: async <Row>(sql: string, params: readonly unknown[] = []) => (await conn.query(sql, [...params]))[0] as Row[],
    end: () => conn.end(),
  };
}

/** The mysql2 adapter's harness: a Pool per session, single Connections for the many-clients case. */
export function mysql2Harness(targets: readonly ConformanceTarget[]): ConformanceHarness<Mysql2Connection> {
  return {
    adapter: 'mysql2',
    targets,
    async open(target, { prefix }): Promise<HarnessSession<Mysql2Connection>> {
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 10 });
      const threadIds = new Set<number>();
      pool.on('connection', (c) => {
        const id =
          (c as unknown as { threadId?: number; connection?: { threadId?: number } }).threadId ??
          (c as unknown as { connection?: { threadId?: number } }).connection?.threadId;
        if (typeof id === 'number') threadIds.add(id);
      });
      const probe = await mysql2Probe(target.url);
      const tr = await taskrow(pool, { prefix });
      let ended = false;
      return {
        taskrow: tr,
        probe,
        async withDriverTransaction(outcome, fn) {
          const conn = await pool.getConnection();
          try {
            await conn.beginTransaction();
            const result = await fn(conn);
            await (outcome === 'commit' ? conn.commit() : conn.rollback());
            return result;
          } catch (err) {
            await conn.rollback().catch(() => undefined);
            throw err;
          } finally {
            conn.release();
          }
        },
        async openClients(n) {
          // At most 100 handshakes in flight, each allowed a minute: a thousand at once time out on two loaded cores.
          const conns = await openEach(
            n,
            () => mysql.createConnection({ uri: target.url, connectTimeout: 60_000 }),
            (c) => c.end(),
          );
          const clients = await Promise.all(conns.map((c) => taskrow(c, { prefix })));
          return { clients, close: async () => void (await Promise.allSettled(conns.map((c) => c.end()))) };
        },
        async killClientConnections() {
          let killed = 0;
          for (const id of threadIds) {
            await probe.query(`KILL ${Number(id)}`).then(
              () => (killed += 1),
              () => undefined,
            );
          }
          threadIds.clear();
          return killed;
        },
        async endClient() {
          ended = true;
          await pool.end();
        },
        async close() {
          if (!ended) await pool.end().catch(() => undefined);
          await probe.end();
        },
      };
    },
  };
}
