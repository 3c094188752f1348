import { Kysely, MysqlDialect, type Transaction } from 'kysely';
import { createPool, type Pool } from 'mysql2';
import type { ConformanceHarness, ConformanceTarget } from '@taskrow/core/conformance';
import { taskrow } from '@taskrow/kysely';
import { mysql2Probe } from './mysql2.js';
import { harnessSession, libraryTransaction } from './shared.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Db = Kysely<any>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Trx = Transaction<any>;

/**
 * A Kysely instance with MysqlDialect over a mysql2 pool of `connectionLimit` connections; the
 * pool's 'connection' event reports each server thread id, so the kit can KILL them.
 */
export function kyselyFor(url: string, connectionLimit: number, threadIds?: Set<number>): { db: Db; pool: Pool } {
  const pool = createPool({ uri: url, connectionLimit });
  if (threadIds) pool.on('connection', (c) => threadIds.add(c.threadId));
  return { db: new Kysely({ dialect: new MysqlDialect({ pool }) }), pool };
}

/** Runs `fn` in `db.transaction().execute()` and commits, or rolls back by throwing a sentinel out of it. */
export async function inKyselyTransaction<T>(db: Db, outcome: 'commit' | 'rollback', fn: (trx: Trx) => Promise<T>): Promise<T> {
  return libraryTransaction((body) => db.transaction().execute(body), outcome, fn);
}

/** The Kysely adapter's harness: a Kysely instance (pool of 10) per session, pool-of-one instances for the many-clients case. */
export function kyselyHarness(targets: readonly ConformanceTarget[]): ConformanceHarness<Trx> {
  return {
    adapter: 'kysely',
    targets,
    async open(target, { prefix }) {
      const threadIds = new Set<number>();
      const { db } = kyselyFor(target.url, 10, threadIds);
      return harnessSession({
        taskrow: await taskrow(db, { prefix }),
        probe: await mysql2Probe(target.url),
        threadIds,
        withDriverTransaction: (outcome, fn) => inKyselyTransaction(db, outcome, fn),
        openOne: async () => kyselyFor(target.url, 1).db,
        connect: (one) => taskrow(one, { prefix }),
        closeOne: (one) => one.destroy(),
        end: () => db.destroy(),
      });
    },
  };
}
