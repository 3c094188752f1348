import knexFactory, { type Knex } from 'knex';
import type { ConformanceHarness, ConformanceTarget } from '@taskrow/core/conformance';
import { taskrow } from '@taskrow/knex';
import { mysql2Probe } from './mysql2.js';
import { harnessSession, libraryTransaction } from './shared.js';

/**
 * A Knex instance over mysql2 whose pool reports the server thread id of every connection it
 * opens (Knex's `afterCreate` hook), so the kit can KILL them.
 */
export function knexFor(url: string, max: number, threadIds?: Set<number>): Knex {
  return knexFactory({
    client: 'mysql2',
    connection: url,
    pool: {
      min: 0,
      max,
      afterCreate(conn: { threadId?: number }, done: (err: Error | null, conn: unknown) => void) {
        if (threadIds && typeof conn.threadId === 'number') threadIds.add(conn.threadId);
        done(null, conn);
      },
    },
  });
}

/** Runs `fn` in `knex.transaction()` and commits, or rolls back by throwing a sentinel out of it. */
export async function inKnexTransaction<T>(db: Knex, outcome: 'commit' | 'rollback', fn: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return libraryTransaction((body) => db.transaction(body), outcome, fn);
}

/** The Knex adapter's harness: a Knex instance (pool of 10) per session, pool-of-one instances for the many-clients case. */
export function knexHarness(targets: readonly ConformanceTarget[]): ConformanceHarness<Knex.Transaction> {
  return {
    adapter: 'knex',
    targets,
    async open(target, { prefix }) {
      const threadIds = new Set<number>();
      const db = knexFor(target.url, 10, threadIds);
      return harnessSession({
        taskrow: await taskrow(db, { prefix }),
        probe: await mysql2Probe(target.url),
        threadIds,
        withDriverTransaction: (outcome, fn) => inKnexTransaction(db, outcome, fn),
        openOne: async () => knexFor(target.url, 1),
        connect: (one) => taskrow(one, { prefix }),
        closeOne: (one) => one.destroy(),
        end: () => db.destroy(),
      });
    },
  };
}
