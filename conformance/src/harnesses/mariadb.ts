import mariadb from 'mariadb';
import type { ConformanceHarness, ConformanceTarget } from '@taskrow/core/conformance';
import { mariadbUrl, taskrow, type MariadbConnection } from '@taskrow/mariadb';
import { mysql2Probe } from './mysql2.js';
import { driverTransaction, harnessSession } from './shared.js';

/**
 * The connection string for a target: the driver wants `mariadb://` and, against MySQL 9 without
 * TLS, public key retrieval to log in as a caching_sha2_password user. A generous connect timeout:
 * the many-clients case opens a thousand connections on two cores (the driver's default is 1 s).
 */
export function mariadbConfig(target: Pick<ConformanceTarget, 'url'>): string {
  const url = mariadbUrl(target.url, { allowPublicKeyRetrieval: true });
  return `${url}${url.includes('?') ? '&' : '?'}connectTimeout=60000`;
}

/** The mariadb adapter's harness: a Pool per session, single Connections for the many-clients case. */
export function mariadbHarness(targets: readonly ConformanceTarget[]): ConformanceHarness<MariadbConnection> {
  return {
    adapter: 'mariadb',
    targets,
    async open(target, { prefix }) {
      const config = mariadbConfig(target);
      const pool = mariadb.createPool(`${config}&connectionLimit=10`);
      const threadIds = new Set<number>();
      pool.on('connection', (c) => {
        if (typeof c.threadId === 'number') threadIds.add(c.threadId);
      });
      return harnessSession({
        taskrow: await taskrow(pool, { prefix }),
        probe: await mysql2Probe(target.url),
        threadIds,
        async withDriverTransaction(outcome, fn) {
          const conn = await pool.getConnection();
          try {
            return await driverTransaction(conn, outcome, () => fn(conn));
          } finally {
            await conn.release();
          }
        },
        openOne: () => mariadb.createConnection(config),
        connect: (conn) => taskrow(conn, { prefix }),
        closeOne: (conn) => conn.end(),
        end: () => pool.end(),
      });
    },
  };
}
