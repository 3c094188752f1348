import { inspect } from 'node:util';
import * as mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { TaskrowError, type Taskrow } from '@taskrow/core';
import { taskrow as drizzleTaskrow } from '@taskrow/drizzle';
import { taskrow as knexTaskrow } from '@taskrow/knex';
import { taskrow as kyselyTaskrow } from '@taskrow/kysely';
import { taskrow as mariadbTaskrow } from '@taskrow/mariadb';
import { taskrow as mysql2Taskrow } from '@taskrow/mysql2';
import { taskrow as sequelizeTaskrow } from '@taskrow/sequelize';
import { drizzleFor, endDrizzle } from '../../src/harnesses/drizzle.js';
import { knexFor } from '../../src/harnesses/knex.js';
import { kyselyFor } from '../../src/harnesses/kysely.js';
import { mariadbConfig } from '../../src/harnesses/mariadb.js';
import { sequelizeFor } from '../../src/harnesses/sequelize.js';
import { label, targets } from '../../src/targets.js';

// Secrets never printed: the error taskrow() rejects with over a client whose password the server
// refuses names no part of that password, in its message, its stack, its causes or any field a
// logger would print (util.inspect, JSON). The drivers decide what their errors hold, so each
// adapter is tried; the server does not matter, so the first one is used. TypeORM is left out: its
// DataSource connects (and fails) before taskrow is given it.

/** A password with every character a URL or a message could mangle. */
const PASSWORD = 'p@ss:w/rd#1%€x';

/** `url` with its password replaced by `PASSWORD`, percent-encoded as a URL needs it. */
function withWrongPassword(url: string): string {
  const u = new URL(url);
  u.password = encodeURIComponent(PASSWORD);
  return u.toString();
}

/** Every 3-character piece of the password, as given and as encoded in the URL. */
const pieces = [PASSWORD, encodeURIComponent(PASSWORD)].flatMap((p) => Array.from({ length: p.length - 2 }, (_, i) => p.slice(i, i + 3)));

/** Everything a program might print of `err`: message, stack, `inspect` down its causes, JSON. */
function printed(err: unknown): string {
  const json = ((): string => {
    try {
      return JSON.stringify(err, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    } catch {
      return '';
    }
  })();
  return [String(err), (err as Error).stack ?? '', inspect(err, { depth: 20, showHidden: true }), json].join('\n');
}

const adapters: Record<string, (url: string) => { connect(): Promise<Taskrow<unknown>>; end(): Promise<unknown> }> = {
  mysql2(url) {
    const pool = mysql.createPool({ uri: url, connectionLimit: 1 });
    return { connect: async () => (await mysql2Taskrow(pool)) as Taskrow<unknown>, end: () => pool.end() };
  },
  mariadb(url) {
    const pool = mariadb.createPool(`${mariadbConfig({ url })}&connectionLimit=1&acquireTimeout=5000`);
    return { connect: async () => (await mariadbTaskrow(pool)) as Taskrow<unknown>, end: () => pool.end() };
  },
  knex(url) {
    const db = knexFor(url, 1);
    return { connect: async () => (await knexTaskrow(db)) as Taskrow<unknown>, end: () => db.destroy() };
  },
  kysely(url) {
    const { db } = kyselyFor(url, 1);
    return { connect: async () => (await kyselyTaskrow(db)) as Taskrow<unknown>, end: () => db.destroy() };
  },
  drizzle(url) {
    const db = drizzleFor(url, 1);
    return { connect: async () => (await drizzleTaskrow(db)) as Taskrow<unknown>, end: () => endDrizzle(db) };
  },
  sequelize(url) {
    const db = sequelizeFor(url, 1);
    return { connect: async () => (await sequelizeTaskrow(db)) as Taskrow<unknown>, end: () => db.close() };
  },
};

const target = targets()[0]!;
describe(`${label(target)} · a refused password is never printed`, () => {
  for (const [adapter, open] of Object.entries(adapters)) {
    it(`${adapter}: taskrow() rejects with a TaskrowError that shows no part of the password`, async () => {
      const client = open(withWrongPassword(target.url));
      try {
        const err = await client.connect().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(TaskrowError);
        const text = printed(err);
        expect(text).toMatch(/denied|authentication/i);
        for (const piece of pieces) expect(text, `"${piece}" printed`).not.toContain(piece);
      } finally {
        await client.end().catch(() => undefined);
      }
    }, 30_000);
  }
});
