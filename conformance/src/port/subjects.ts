import mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import type { SqlClient } from '@taskrow/core';
import type { ConformanceTarget } from '@taskrow/core/conformance';
import { drizzleClient, drizzleTransactionClient, taskrow as drizzleTaskrow } from '@taskrow/drizzle';
import { knexClient, taskrow as knexTaskrow } from '@taskrow/knex';
import { kyselyClient, taskrow as kyselyTaskrow } from '@taskrow/kysely';
import { mariadbClient, taskrow as mariadbTaskrow } from '@taskrow/mariadb';
import { mysql2Client, taskrow as mysql2Taskrow } from '@taskrow/mysql2';
import { sequelizeClient, sequelizeTransactionClient, taskrow as sequelizeTaskrow, type Mysql2CallbackConnection } from '@taskrow/sequelize';
import { typeormClient, typeormTransactionClient, taskrow as typeormTaskrow } from '@taskrow/typeorm';
import { drizzleFor, endDrizzle, inDrizzleTransaction } from '../harnesses/drizzle.js';
import { inKnexTransaction, knexFor } from '../harnesses/knex.js';
import { inKyselyTransaction, kyselyFor } from '../harnesses/kysely.js';
import { mariadbConfig } from '../harnesses/mariadb.js';
import { inSequelizeTransaction, sequelizeFor } from '../harnesses/sequelize.js';
import { inTypeormTransaction, typeormFor } from '../harnesses/typeorm.js';
import { driverTransaction } from '../harnesses/shared.js';

/** One adapter's `SqlClient` over a fresh pool, with what the port contract checks about it. */
export interface PortFixture {
  /** The adapter's client over a pool of `size` connections. */
  readonly client: SqlClient;
  /** Runs `fn` with a joined client inside a transaction opened with the library's own API. */
  withJoined<T>(outcome: 'commit' | 'rollback', fn: (joined: SqlClient) => Promise<T>): Promise<T>;
  /** Connections the pool has lent out and not taken back, read from the pool's own counters. */
  inUse(): number;
  /** Calls the adapter's `taskrow()` factory on the same pool. */
  connect(): Promise<unknown>;
  /** Ends the pool (as the application would). */
  end(): Promise<void>;
}

/** How the port contract opens one adapter. */
export interface PortSubject {
  readonly adapter: string;
  open(target: ConformanceTarget, size: number): Promise<PortFixture>;
}

/** Lent connections of a mysql2 (callback) pool. mysql2 has no public counter; its two queues are read. */
function mysql2InUse(pool: unknown): number {
  const p = pool as { _allConnections?: { length: number }; _freeConnections?: { length: number } };
  if (!p._allConnections || !p._freeConnections) throw new Error('this mysql2 version no longer has _allConnections / _freeConnections');
  return p._allConnections.length - p._freeConnections.length;
}

export const mysql2Subject: PortSubject = {
  adapter: 'mysql2',
  async open(target, size) {
    const pool = mysql.createPool({ uri: target.url, connectionLimit: size });
    return {
      client: mysql2Client(pool),
      async withJoined(outcome, fn) {
        const conn = await pool.getConnection();
        try {
          return await driverTransaction(conn, outcome, () => fn(mysql2Client(conn, true)));
        } finally {
          conn.release();
        }
      },
      inUse: () => mysql2InUse(pool.pool),
      connect: () => mysql2Taskrow(pool),
      end: () => pool.end(),
    };
  },
};

export const mariadbSubject: PortSubject = {
  adapter: 'mariadb',
  async open(target, size) {
    const pool = mariadb.createPool(`${mariadbConfig(target)}&connectionLimit=${size}&acquireTimeout=20000`);
    return {
      client: mariadbClient(pool),
      async withJoined(outcome, fn) {
        const conn = await pool.getConnection();
        try {
          return await driverTransaction(conn, outcome, () => fn(mariadbClient(conn, true)));
        } finally {
          await conn.release();
        }
      },
      inUse: () => pool.activeConnections(),
      connect: () => mariadbTaskrow(pool),
      end: () => pool.end(),
    };
  },
};

export const knexSubject: PortSubject = {
  adapter: 'knex',
  async open(target, size) {
    const db = knexFor(target.url, size);
    return {
      client: knexClient(db),
      withJoined: (outcome, fn) => inKnexTransaction(db, outcome, (trx) => fn(knexClient(trx, true))),
      inUse: () => (db.client as { pool: { numUsed(): number } }).pool.numUsed(),
      connect: () => knexTaskrow(db),
      end: () => db.destroy(),
    };
  },
};

export const kyselySubject: PortSubject = {
  adapter: 'kysely',
  async open(target, size) {
    const { db, pool } = kyselyFor(target.url, size);
    return {
      client: kyselyClient(db),
      withJoined: (outcome, fn) => inKyselyTransaction(db, outcome, (trx) => fn(kyselyClient(trx, true))),
      inUse: () => mysql2InUse(pool),
      connect: () => kyselyTaskrow(db),
      end: () => db.destroy(),
    };
  },
};

export const drizzleSubject: PortSubject = {
  adapter: 'drizzle',
  async open(target, size) {
    const db = drizzleFor(target.url, size);
    return {
      client: drizzleClient(db),
      withJoined: (outcome, fn) => inDrizzleTransaction(db, outcome, (tx) => fn(drizzleTransactionClient(tx))),
      inUse: () => mysql2InUse(db.$client),
      connect: () => drizzleTaskrow(db),
      end: () => endDrizzle(db),
    };
  },
};

export const sequelizeSubject: PortSubject = {
  adapter: 'sequelize',
  async open(target, size) {
    const db = sequelizeFor(target.url, size);
    return {
      client: sequelizeClient(db),
      // The joined client over a transaction's connection, as tr.in(t) makes it.
      withJoined: (outcome, fn) => inSequelizeTransaction(db, outcome, (t) => fn(sequelizeJoined(t))),
      inUse: () => (db.connectionManager as unknown as { pool: { using: number } }).pool.using,
      connect: () => sequelizeTaskrow(db),
      end: () => db.close(),
    };
  },
};

export const typeormSubject: PortSubject = {
  adapter: 'typeorm',
  async open(target, size) {
    const ds = await typeormFor(target.url, size);
    return {
      client: typeormClient(ds),
      withJoined: (outcome, fn) => inTypeormTransaction(ds, outcome, (manager) => fn(typeormTransactionClient(manager))),
      inUse: () => mysql2InUse((ds.driver as unknown as { pool: unknown }).pool),
      connect: () => typeormTaskrow(ds),
      end: () => ds.destroy(),
    };
  },
};

/** The joined client over a Sequelize transaction's connection (what `tr.in(t)` builds). */
function sequelizeJoined(t: object): SqlClient {
  return sequelizeTransactionClient((t as { connection: Mysql2CallbackConnection }).connection);
}

/** Every adapter's subject, mysql2 first (the reference). */
export const PORT_SUBJECTS: readonly PortSubject[] = [
  mysql2Subject,
  mariadbSubject,
  knexSubject,
  kyselySubject,
  drizzleSubject,
  sequelizeSubject,
  typeormSubject,
];
