import * as mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import type { Taskrow } from '@taskrow/core';
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
import { sequelizeFor } from '../../src/harnesses/sequelize.js';
import { typeormFor } from '../../src/harnesses/typeorm.js';

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
