import * as mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import type { Taskrow } from '@taskrow/core';
import { runningStatement, until } from '@taskrow/core/conformance';
import { drizzleClient, taskrow as drizzleTaskrow } from '@taskrow/drizzle';
import { knexClient, taskrow as knexTaskrow } from '@taskrow/knex';
import { kyselyClient, taskrow as kyselyTaskrow } from '@taskrow/kysely';
import { mariadbClient, taskrow as mariadbTaskrow } from '@taskrow/mariadb';
import { mysql2Client, taskrow as mysql2Taskrow } from '@taskrow/mysql2';
import { sequelizeClient, taskrow as sequelizeTaskrow } from '@taskrow/sequelize';
import { typeormClient, taskrow as typeormTaskrow } from '@taskrow/typeorm';
import { describeAbandonedStatement, options, POOL_SIZE, type OpenAbandoning } from '../../src/abandoned-statement.js';
import { drizzleFor, endDrizzle } from '../../src/harnesses/drizzle.js';
import { knexFor } from '../../src/harnesses/knex.js';
import { kyselyFor } from '../../src/harnesses/kysely.js';
import { mariadbConfig } from '../../src/harnesses/mariadb.js';
import { mysql2Probe } from '../../src/harnesses/mysql2.js';
import { sequelizeFor } from '../../src/harnesses/sequelize.js';
import { typeormFor } from '../../src/harnesses/typeorm.js';
import { label, targets } from '../../src/targets.js';

// The abandoned-work rule through all seven adapters on every server (src/abandoned-statement.ts);
// the durations taskrow is given are the constants at the top of that file. Kysely runs here as
// 0.28 (its KILL of its own); the kysely-0.29 project runs the same cases on Kysely 0.29.
const adapters: Record<string, OpenAbandoning> = {
  async mysql2(target, prefix) {
    const pool = mysql.createPool({ uri: target.url, connectionLimit: POOL_SIZE });
    return { tr: (await mysql2Taskrow(pool, options(prefix))) as Taskrow<unknown>, client: mysql2Client(pool), end: () => pool.end() };
  },
  async mariadb(target, prefix) {
    const pool = mariadb.createPool(`${mariadbConfig(target)}&connectionLimit=${POOL_SIZE}`);
    return { tr: (await mariadbTaskrow(pool, options(prefix))) as Taskrow<unknown>, client: mariadbClient(pool), end: () => pool.end() };
  },
  async knex(target, prefix) {
    const db = knexFor(target.url, POOL_SIZE);
    return { tr: (await knexTaskrow(db, options(prefix))) as Taskrow<unknown>, client: knexClient(db), end: () => db.destroy() };
  },
  async kysely(target, prefix) {
    const { db } = kyselyFor(target.url, POOL_SIZE);
    return { tr: (await kyselyTaskrow(db, options(prefix))) as Taskrow<unknown>, client: kyselyClient(db), end: () => db.destroy() };
  },
  async drizzle(target, prefix) {
    const db = drizzleFor(target.url, POOL_SIZE);
    return { tr: (await drizzleTaskrow(db, options(prefix))) as Taskrow<unknown>, client: drizzleClient(db), end: () => endDrizzle(db) };
  },
  async sequelize(target, prefix) {
    const db = sequelizeFor(target.url, POOL_SIZE);
    return { tr: (await sequelizeTaskrow(db, options(prefix))) as Taskrow<unknown>, client: sequelizeClient(db), end: () => db.close() };
  },
  async typeorm(target, prefix) {
    const ds = await typeormFor(target.url, POOL_SIZE);
    return { tr: (await typeormTaskrow(ds, options(prefix))) as Taskrow<unknown>, client: typeormClient(ds), end: () => ds.destroy() };
  },
};

describeAbandonedStatement(adapters);

/** The server's `SLEEP` (seconds) given up on Kysely 0.28 over a pool of one (below). */
const SLEEP_IN_POOL_OF_ONE = 1;

// What the Kysely README says of 0.28 over a pool of one: the KILL waits for a connection, which
// comes back only once the statement ended by itself, and is then not sent, so it cannot reach
// the session that connection now serves (here: the next statement, on the same session).
for (const target of targets()) {
  describe(`${label(target)} · kysely · a statement given up over a pool of one`, () => {
    it('runs to its end; the KILL is not sent, and the next statement runs on the same session', async () => {
      const { db } = kyselyFor(target.url, 1);
      const probe = await mysql2Probe(target.url);
      try {
        const client = kyselyClient(db);
        const sessionOf = async (): Promise<number> => Number((await client.query<{ id: unknown }>('SELECT CONNECTION_ID() AS id')).rows[0]?.id);
        const before = await sessionOf();
        const abort = new AbortController();
        const t0 = performance.now();
        const sleep = `SELECT SLEEP(${SLEEP_IN_POOL_OF_ONE}) AS one_slot_${process.pid}`;
        void client.query(sleep, [], { signal: abort.signal }).catch(() => undefined);
        await until('the SLEEP runs on the server', async () => (await runningStatement(probe, target.engine, sleep)) !== 0, 5);
        abort.abort();
        const after = await sessionOf(); // waits behind the KILL's turn for the one connection
        expect(performance.now() - t0, 'the SLEEP ran to its end').toBeGreaterThanOrEqual(SLEEP_IN_POOL_OF_ONE * 1000 - 50);
        expect(after, 'the session was not killed').toBe(before);
      } finally {
        await db.destroy();
        await probe.end();
      }
    });
  });
}
