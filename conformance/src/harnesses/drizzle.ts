import { drizzle, type MySql2Database } from 'drizzle-orm/mysql2';
import { createPool, type Pool } from 'mysql2';
import type { ConformanceHarness, ConformanceTarget } from '@taskrow/core/conformance';
import { taskrow, type DrizzleTransaction } from '@taskrow/drizzle';
import { mysql2Probe } from './mysql2.js';
import { harnessSession, libraryTransaction } from './shared.js';

type Db = MySql2Database<Record<string, never>> & { $client: Pool };

/**
 * A Drizzle database (mysql2 driver) over a mysql2 pool of `connectionLimit` connections; the
 * pool's 'connection' event reports each server thread id, so the kit can KILL them.
 */
export function drizzleFor(url: string, connectionLimit: number, threadIds?: Set<number>): Db {
  const pool = createPool({ uri: url, connectionLimit });
  if (threadIds) pool.on('connection', (c) => threadIds.add(c.threadId));
  return drizzle(pool);
}

/** Ends the mysql2 pool under a Drizzle database (Drizzle has no close of its own). */
export const endDrizzle = (db: Db): Promise<void> => db.$client.promise().end();

/** Runs `fn` in `db.transaction()` and commits, or rolls back by throwing a sentinel out of it. */
export async function inDrizzleTransaction<T>(db: Db, outcome: 'commit' | 'rollback', fn: (tx: DrizzleTransaction) => Promise<T>): Promise<T> {
  return libraryTransaction((body) => db.transaction(body), outcome, fn);
}

/** The Drizzle adapter's harness: a database over a pool of 10 per session, pool-of-one databases for the many-clients case. */
export function drizzleHarness(targets: readonly ConformanceTarget[]): ConformanceHarness<DrizzleTransaction> {
  return {
    adapter: 'drizzle',
    targets,
    async open(target, { prefix }) {
      const threadIds = new Set<number>();
      const db = drizzleFor(target.url, 10, threadIds);
      return harnessSession({
        taskrow: await taskrow(db, { prefix }),
        probe: await mysql2Probe(target.url),
        threadIds,
        withDriverTransaction: (outcome, fn) => inDrizzleTransaction(db, outcome, fn),
        openOne: async () => drizzleFor(target.url, 1),
        connect: (one) => taskrow(one, { prefix }),
        closeOne: endDrizzle,
        end: () => endDrizzle(db),
      });
    },
  };
}
