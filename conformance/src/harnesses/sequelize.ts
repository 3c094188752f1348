import { Sequelize, type Transaction } from 'sequelize';
import type { ConformanceHarness, ConformanceTarget } from '@taskrow/core/conformance';
import { taskrow, type SequelizeTransaction } from '@taskrow/sequelize';
import { mysql2Probe } from './mysql2.js';
import { harnessSession, libraryTransaction } from './shared.js';

/**
 * A Sequelize instance (dialect mysql, FOUND_ROWS on, as taskrow requires) with a pool of `max`
 * connections; its `afterConnect` hook reports each server thread id, so the kit can KILL them.
 */
export function sequelizeFor(url: string, max: number, threadIds?: Set<number>): Sequelize {
  const db = new Sequelize(url, {
    dialect: 'mysql',
    logging: false,
    pool: { max, min: 0, acquire: 60_000 },
    dialectOptions: { flags: ['+FOUND_ROWS'], connectTimeout: 60_000 },
  });
  if (threadIds) db.addHook('afterConnect', (conn) => void threadIds.add((conn as { threadId: number }).threadId));
  return db;
}

/** Runs `fn` in a managed `sequelize.transaction()` and commits, or rolls back by throwing a sentinel out of it. */
export async function inSequelizeTransaction<T>(db: Sequelize, outcome: 'commit' | 'rollback', fn: (t: Transaction) => Promise<T>): Promise<T> {
  return libraryTransaction((body) => db.transaction(body), outcome, fn);
}

/** The Sequelize adapter's harness: an instance (pool of 10) per session, pool-of-one instances for the many-clients case. */
export function sequelizeHarness(targets: readonly ConformanceTarget[]): ConformanceHarness<SequelizeTransaction> {
  return {
    adapter: 'sequelize',
    targets,
    async open(target, { prefix }) {
      const threadIds = new Set<number>();
      const db = sequelizeFor(target.url, 10, threadIds);
      return harnessSession({
        taskrow: await taskrow(db, { prefix }),
        probe: await mysql2Probe(target.url),
        threadIds,
        withDriverTransaction: (outcome, fn) => inSequelizeTransaction(db, outcome, fn),
        openOne: async () => sequelizeFor(target.url, 1),
        connect: (one) => taskrow(one, { prefix }),
        closeOne: (one) => one.close(),
        end: () => db.close(),
      });
    },
  };
}
