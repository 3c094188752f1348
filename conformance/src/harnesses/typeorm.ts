import { DataSource, type EntityManager } from 'typeorm';
import type { ConformanceHarness, ConformanceTarget } from '@taskrow/core/conformance';
import { taskrow, type TypeormTransaction } from '@taskrow/typeorm';
import { mysql2Probe } from './mysql2.js';
import { harnessSession, libraryTransaction } from './shared.js';

/** The mysql2 pool under an initialized DataSource (TypeORM's MysqlDriver keeps it as `pool`). */
interface Mysql2Pool {
  on(event: 'connection', fn: (conn: { threadId: number }) => void): void;
  _allConnections?: { toArray(): { threadId: number }[] };
}

/**
 * An initialized DataSource (type mysql) over a pool of `poolSize` connections. The thread id of
 * each connection (the one `initialize()` opened, then every new one, through the mysql2 pool's
 * 'connection' event) goes to `threadIds`, so the kit can KILL them.
 */
export async function typeormFor(url: string, poolSize: number, threadIds?: Set<number>): Promise<DataSource> {
  const ds = new DataSource({ type: 'mysql', url, poolSize, connectTimeout: 60_000, logging: false });
  await ds.initialize();
  if (threadIds) {
    const pool = (ds.driver as unknown as { pool: Mysql2Pool }).pool;
    for (const c of pool._allConnections?.toArray() ?? []) threadIds.add(c.threadId);
    pool.on('connection', (c) => threadIds.add(c.threadId));
  }
  return ds;
}

/** Runs `fn` in `dataSource.transaction()` and commits, or rolls back by throwing a sentinel out of it. */
export async function inTypeormTransaction<T>(ds: DataSource, outcome: 'commit' | 'rollback', fn: (manager: EntityManager) => Promise<T>): Promise<T> {
  return libraryTransaction((body) => ds.transaction(body), outcome, fn);
}

/** The TypeORM adapter's harness: a DataSource (pool of 10) per session, pool-of-one DataSources for the many-clients case. */
export function typeormHarness(targets: readonly ConformanceTarget[]): ConformanceHarness<TypeormTransaction> {
  return {
    adapter: 'typeorm',
    targets,
    async open(target, { prefix }) {
      const threadIds = new Set<number>();
      const ds = await typeormFor(target.url, 10, threadIds);
      return harnessSession({
        taskrow: await taskrow(ds, { prefix }),
        probe: await mysql2Probe(target.url),
        threadIds,
        withDriverTransaction: (outcome, fn) => inTypeormTransaction(ds, outcome, fn),
        openOne: () => typeormFor(target.url, 1),
        connect: (one) => taskrow(one, { prefix }),
        closeOne: (one) => one.destroy(),
        end: () => ds.destroy(),
      });
    },
  };
}
