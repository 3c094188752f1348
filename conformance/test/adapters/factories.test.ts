import knexFactory from 'knex';
import { Kysely, PostgresDialect } from 'kysely';
import mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow as knexTaskrow } from '@taskrow/knex';
import { taskrow as kyselyTaskrow } from '@taskrow/kysely';
import { taskrow as mariadbTaskrow } from '@taskrow/mariadb';
import { inKnexTransaction, knexFor } from '../../src/harnesses/knex.js';
import { kyselyFor } from '../../src/harnesses/kysely.js';
import { mariadbConfig } from '../../src/harnesses/mariadb.js';
import { invalidClient, NOT_CLIENTS } from '../../src/factory-checks.js';
import { label, targets } from '../../src/targets.js';

for (const target of targets()) {
  describe(`${label(target)} · mariadb · factory`, () => {
    it('rejects anything but a mariadb promise client, saying what it expected', async () => {
      const other = mysql.createPool({ uri: target.url, connectionLimit: 1 });
      try {
        for (const bad of [...NOT_CLIENTS, other]) {
          await invalidClient(() => mariadbTaskrow(bad as never), /expected a mariadb Pool, PoolConnection or Connection/);
        }
      } finally {
        await other.end();
      }
    });

    it('rejects an ended pool and a closed connection', async () => {
      const pool = mariadb.createPool(`${mariadbConfig(target)}&connectionLimit=1`);
      await pool.end();
      await invalidClient(() => mariadbTaskrow(pool), /pool that has been ended/);
      const conn = await mariadb.createConnection(mariadbConfig(target));
      await conn.end();
      await invalidClient(() => mariadbTaskrow(conn), /connection that is closed/);
    });

    it('in() takes the connection of a transaction, not a pool', async () => {
      const pool = mariadb.createPool(`${mariadbConfig(target)}&connectionLimit=2`);
      try {
        const tr = await mariadbTaskrow(pool);
        await invalidClient(() => tr.in(pool as never), /in\(\) expected the Connection or PoolConnection your transaction runs on, got a Pool/);
        await invalidClient(() => tr.in({} as never), /in\(\) expected a mariadb Pool, PoolConnection or Connection/);
      } finally {
        await pool.end();
      }
    });
  });

  describe(`${label(target)} · knex · factory`, () => {
    it('rejects a query builder, another client and a non-Knex value, saying what it expected', async () => {
      const db = knexFor(target.url, 1);
      try {
        await invalidClient(() => knexTaskrow(db('some_table') as never), /expected a Knex instance, got a Knex query builder/);
        await invalidClient(() => knexTaskrow(knexFactory({ client: 'pg' })), /expected a Knex instance with client "mysql2", got client "pg"/);
        for (const bad of NOT_CLIENTS) await invalidClient(() => knexTaskrow(bad as never), /expected a Knex instance/);
      } finally {
        await db.destroy();
      }
    });

    it('rejects a destroyed instance, a transaction given to taskrow(), and an instance or finished transaction given to in()', async () => {
      const db = knexFor(target.url, 2);
      try {
        const tr = await knexTaskrow(db);
        await inKnexTransaction(db, 'rollback', async (trx) => {
          await invalidClient(() => knexTaskrow(trx), /got a Knex transaction: bind a transaction with tr.in\(trx\)/);
        });
        await invalidClient(() => tr.in(db as never), /in\(\) expected a Knex transaction .*, got a Knex instance/);
        const trx = await db.transaction();
        await trx.commit();
        await invalidClient(() => tr.in(trx), /already committed or rolled back/);
      } finally {
        await db.destroy();
      }
      await invalidClient(() => knexTaskrow(db), /destroyed/);
    });
  });

  describe(`${label(target)} · kysely · factory`, () => {
    it('rejects a query builder, another dialect and a non-Kysely value, saying what it expected', async () => {
      const { db } = kyselyFor(target.url, 1);
      const pg = new Kysely({ dialect: new PostgresDialect({ pool: {} as never }) });
      try {
        await invalidClient(() => kyselyTaskrow(db.selectFrom('some_table') as never), /expected a Kysely instance, got a Kysely query builder/);
        await invalidClient(() => kyselyTaskrow(pg), /expected a Kysely instance with a MySQL dialect/);
        for (const bad of NOT_CLIENTS) await invalidClient(() => kyselyTaskrow(bad as never), /expected a Kysely instance/);
      } finally {
        await db.destroy();
      }
    });

    it('rejects a destroyed instance, a transaction given to taskrow(), and an instance or finished transaction given to in()', async () => {
      const { db } = kyselyFor(target.url, 2);
      const tr = await kyselyTaskrow(db);
      await db.transaction().execute(async (trx) => {
        await invalidClient(() => kyselyTaskrow(trx), /got a Kysely transaction: bind a transaction with tr.in\(trx\)/);
      });
      await invalidClient(() => tr.in(db as never), /in\(\) expected a Kysely Transaction .*, got a Kysely instance/);
      const trx = await db.startTransaction().execute();
      await trx.commit().execute();
      await invalidClient(() => tr.in(trx), /already committed or rolled back/);
      await db.destroy();
      await invalidClient(() => kyselyTaskrow(db), /destroyed/);
    });
  });
}
