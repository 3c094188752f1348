import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mysqlTable, int } from 'drizzle-orm/mysql-core';
import { drizzle as mysqlProxy } from 'drizzle-orm/mysql-proxy';
import { drizzle } from 'drizzle-orm/mysql2';
import mysql from 'mysql2/promise';
import { migrate } from 'drizzle-orm/mysql2/migrator';
import { drizzle as pgProxy } from 'drizzle-orm/pg-proxy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '@taskrow/core';
import { freshName } from '@taskrow/core/conformance';
import { drizzleClient, taskrow, taskrowMigrationFiles, writeTaskrowMigrations } from '@taskrow/drizzle';
import { drizzleFor, endDrizzle, inDrizzleTransaction } from '../../src/harnesses/drizzle.js';
import { mysql2Probe } from '../../src/harnesses/mysql2.js';
import { invalidClient, NOT_CLIENTS, throwsCode } from '../../src/factory-checks.js';
import { tablesOf, versionsOf } from '../../src/schema/inspect.js';
import { useReference } from '../../src/schema/reference.js';
import { label, targets } from '../../src/targets.js';

// The Drizzle adapter's own checks: what its factory refuses, and its drizzle-kit migrations folder.
const VERSIONS = MIGRATIONS.map((m) => m.version);
const noQuery = async (): Promise<{ rows: unknown[] }> => ({ rows: [] });

for (const target of targets()) {
  describe(`${label(target)} · drizzle · factory`, () => {
    it('rejects a query, another dialect, another MySQL driver and a non-Drizzle value, saying what it expected', async () => {
      const db = drizzleFor(target.url, 1);
      try {
        const table = mysqlTable('some_table', { id: int('id') });
        await invalidClient(
          () => taskrow(db.select().from(table) as never),
          /expected a Drizzle database from drizzle-orm\/mysql2, got a Drizzle \w+ \(pass the database/,
        );
        await invalidClient(
          () => taskrow(pgProxy(noQuery) as never),
          /expected a Drizzle database from drizzle-orm\/mysql2, got a Drizzle PgRemoteDatabase \(another dialect\)/,
        );
        await invalidClient(() => taskrow(mysqlProxy(noQuery) as never), /expected a Drizzle database of the mysql2 driver .*MySqlRemoteSession/);
        for (const bad of NOT_CLIENTS) await invalidClient(() => taskrow(bad as never), /expected a Drizzle database from drizzle-orm\/mysql2/);
      } finally {
        await endDrizzle(db);
      }
    });

    it('rejects a database whose pool was ended, a transaction given to taskrow(), and a database given to in()', async () => {
      const db = drizzleFor(target.url, 2);
      try {
        const tr = await taskrow(db);
        await inDrizzleTransaction(db, 'rollback', async (tx) => {
          await invalidClient(() => taskrow(tx as never), /got a Drizzle transaction: bind a transaction with tr.in\(tx\)/);
        });
        await invalidClient(() => tr.in(db as never), /in\(\) expected a Drizzle transaction .*, got a Drizzle database/);
        await invalidClient(() => tr.in({} as never), /in\(\) expected a Drizzle transaction/);
      } finally {
        await endDrizzle(db);
      }
      await invalidClient(() => taskrow(db), /pool or connection has been ended/);
    });

    it("over a single mysql2 Connection, transactions take turns: one's rollback never takes another's write", async () => {
      const conn = await mysql.createConnection(target.url);
      const probe = await mysql2Probe(target.url);
      const t = `one_${freshName('t')}`;
      try {
        await probe.query(`CREATE TABLE \`${t}\` (v INT NOT NULL) ENGINE=InnoDB`);
        const client = drizzleClient(drizzle(conn));
        // Interleaved on one connection, the second BEGIN would end the first transaction and the
        // first one's ROLLBACK would undo the second one's insert.
        const outcomes = await Promise.allSettled([
          client.transaction(async (c) => {
            await c.query(`INSERT INTO \`${t}\` (v) VALUES (?)`, [1]);
            throw new Error('undo');
          }),
          client.transaction(async (c) => c.query(`INSERT INTO \`${t}\` (v) VALUES (?)`, [2])),
        ]);
        expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
        expect(await probe.query(`SELECT v FROM \`${t}\``)).toEqual([{ v: 2 }]);
        const tr = await taskrow(drizzle(conn));
        expect(tr.dialect.engine).toBe(target.engine);
      } finally {
        await probe.query(`DROP TABLE IF EXISTS \`${t}\``);
        await probe.end();
        await conn.end();
      }
    });
  });

  describe(`${label(target)} · drizzle · migrations`, () => {
    const ref = useReference(target.url);
    const prefix = `${freshName('z')}_`;
    const migrationsTable = `${prefix}drizzle_migrations`;
    const folder = mkdtempSync(join(tmpdir(), 'taskrow-drizzle-'));
    let db: ReturnType<typeof drizzleFor>;
    beforeAll(() => {
      ref().prefixes.push(prefix);
      db = drizzleFor(target.url, 2);
    });
    afterAll(async () => {
      rmSync(folder, { recursive: true, force: true });
      if (db) await endDrizzle(db);
    });
    const applied = async (): Promise<number> => Number((await ref().probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${migrationsTable}\``))[0]?.n);

    it('writes a drizzle-kit folder: one SQL file per schema version and a journal listing them in order', () => {
      const written = writeTaskrowMigrations(folder, { prefix });
      const tags = MIGRATIONS.map((m) => `${prefix}${String(m.version).padStart(4, '0')}_${m.name}`);
      expect(written).toEqual([...tags.map((t) => join(folder, `${t}.sql`)), join(folder, 'meta/_journal.json')]);
      const journal = JSON.parse(readFileSync(join(folder, 'meta/_journal.json'), 'utf8')) as {
        dialect: string;
        entries: { idx: number; tag: string; when: number }[];
      };
      expect(journal.dialect).toBe('mysql');
      expect(journal.entries.map((e) => [e.idx, e.tag])).toEqual(tags.map((t, i) => [i, t]));
      const whens = journal.entries.map((e) => e.when);
      expect(whens.every((w, i) => i === 0 || w > whens[i - 1]!)).toBe(true);
      expect(taskrowMigrationFiles({ prefix })).toEqual(taskrowMigrationFiles({ prefix })); // the same files every time
    });

    it("Drizzle's migrator applies it: exactly the tables core's migrate() creates", async () => {
      const { probe, reference } = ref();
      await migrate(db, { migrationsFolder: folder, migrationsTable });
      const expected = await tablesOf(probe, reference);
      expect(expected.size).toBeGreaterThan(1);
      expect(await tablesOf(probe, prefix, ['drizzle_migrations'])).toEqual(expected);
      expect(await versionsOf(probe, prefix)).toEqual(VERSIONS);
      expect(await applied()).toBe(MIGRATIONS.length);
    });

    it('leaves nothing for migrate() to apply, and a second run of the migrator applies nothing', async () => {
      const tr = await taskrow(db, { prefix });
      expect((await tr.migrate()).applied).toEqual([]);
      await migrate(db, { migrationsFolder: folder, migrationsTable });
      expect(await applied()).toBe(MIGRATIONS.length);
    });

    it('rejects an invalid prefix with INVALID_NAME before anything is written', () => {
      throwsCode(() => taskrowMigrationFiles({ prefix: 'no-dashes!' }), 'INVALID_NAME');
      throwsCode(() => writeTaskrowMigrations(join(folder, 'never'), { prefix: 'no-dashes!' }), 'INVALID_NAME');
    });
  });
}
