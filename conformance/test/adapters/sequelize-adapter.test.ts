import { Sequelize } from 'sequelize';
import { SequelizeStorage, Umzug } from 'umzug';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '@taskrow/core';
import { dropPrefix, freshName } from '@taskrow/core/conformance';
import { taskrow, taskrowMigrations } from '@taskrow/sequelize';
import { mysql2Probe } from '../../src/harnesses/mysql2.js';
import { inSequelizeTransaction, sequelizeFor } from '../../src/harnesses/sequelize.js';
import { invalidClient, NOT_CLIENTS, throwsCode } from '../../src/factory-checks.js';
import { tablesOf, versionsOf } from '../../src/schema/inspect.js';
import { useReference } from '../../src/schema/reference.js';
import { label, targets } from '../../src/targets.js';

// The Sequelize adapter's own checks: what its factory refuses, unmanaged transactions, and its Umzug migrations.
const VERSIONS = MIGRATIONS.map((m) => m.version);
const NAMES = (prefix: string): string[] => MIGRATIONS.map((m) => `${prefix}${String(m.version).padStart(4, '0')}_${m.name}`);

for (const target of targets()) {
  describe(`${label(target)} · sequelize · factory`, () => {
    it('rejects another dialect, a connection without FOUND_ROWS and a non-Sequelize value, saying what it expected', async () => {
      // The URL's scheme names the dialect (it overrides the `dialect` option).
      const maria = new Sequelize(target.url.replace(/^mysql:/, 'mariadb:'), { dialect: 'mariadb', logging: false });
      const changedRows = new Sequelize(target.url, { dialect: 'mysql', logging: false, pool: { max: 1, min: 0 } });
      try {
        await invalidClient(() => taskrow(maria), /expected a Sequelize instance with dialect "mysql" .*, got dialect "mariadb"/);
        await invalidClient(() => taskrow(changedRows), /dialectOptions: \{ flags: \['\+FOUND_ROWS'\] \}/);
        for (const bad of NOT_CLIENTS) await invalidClient(() => taskrow(bad as never), /expected a Sequelize instance/);
      } finally {
        await maria.close();
        await changedRows.close();
      }
    });

    it('rejects a closed instance, a transaction given to taskrow(), and an instance or finished transaction given to in()', async () => {
      const db = sequelizeFor(target.url, 2);
      try {
        const tr = await taskrow(db);
        await inSequelizeTransaction(db, 'rollback', async (t) => {
          await invalidClient(() => taskrow(t as never), /got a Sequelize transaction: bind a transaction with tr.in\(t\)/);
        });
        await invalidClient(() => tr.in(db as never), /in\(\) expected a Sequelize transaction .*, got a Sequelize instance/);
        const t = await db.transaction();
        await t.commit();
        await invalidClient(() => tr.in(t), /already finished \(commit\)/);
      } finally {
        await db.close();
      }
      await invalidClient(() => taskrow(db), /has been closed/);
    });

    it('joins an unmanaged transaction: its rollback takes the write away, its commit keeps it', async () => {
      const db = sequelizeFor(target.url, 2);
      const prefix = `${freshName('s')}_`;
      const probe = await mysql2Probe(target.url);
      try {
        const tr = await taskrow(db, { prefix });
        await tr.migrate();
        const ns = freshName('ns');
        const dropped = await db.transaction();
        await tr.in(dropped).dones(ns).mark(['gone']);
        await dropped.rollback();
        const kept = await db.transaction();
        await tr.in(kept).dones(ns).mark(['kept']);
        expect(await probe.query(`SELECT k FROM \`${prefix}dones\``)).toEqual([]); // not visible before the commit
        await kept.commit();
        const rows = await probe.query<{ k: Buffer }>(`SELECT k FROM \`${prefix}dones\``);
        expect(rows.map((r) => r.k.toString('utf8'))).toEqual(['kept']);
      } finally {
        await dropPrefix(probe, prefix);
        await probe.end();
        await db.close();
      }
    });
  });

  describe(`${label(target)} · sequelize · migrations`, () => {
    const ref = useReference(target.url);
    const prefix = `${freshName('q')}_`;
    let db: Sequelize;
    const umzug = (): Umzug<ReturnType<Sequelize['getQueryInterface']>> =>
      new Umzug({
        migrations: taskrowMigrations({ prefix }),
        context: db.getQueryInterface(),
        storage: new SequelizeStorage({ sequelize: db, tableName: `${prefix}umzug_meta` }),
        logger: undefined,
      });
    beforeAll(() => {
      ref().prefixes.push(prefix);
      db = sequelizeFor(target.url, 2);
    });
    afterAll(() => db?.close());

    it("umzug.up() creates exactly the tables core's migrate() creates", async () => {
      const { probe, reference } = ref();
      const ran = await umzug().up();
      expect(ran.map((m) => m.name)).toEqual(NAMES(prefix));
      const expected = await tablesOf(probe, reference);
      expect(expected.size).toBeGreaterThan(1);
      expect(await tablesOf(probe, prefix, ['umzug_meta'])).toEqual(expected);
      expect(await versionsOf(probe, prefix)).toEqual(VERSIONS);
    });

    it('leaves nothing for migrate() to apply, and a second up() runs nothing', async () => {
      const tr = await taskrow(db, { prefix });
      expect((await tr.migrate()).applied).toEqual([]);
      expect(await umzug().up()).toEqual([]);
    });

    it("keeps taskrow's tables and rows through umzug.down(), and re-applies cleanly", async () => {
      const { probe, reference } = ref();
      const tr = await taskrow(db, { prefix });
      const ns = freshName('ns');
      await tr.dones(ns).mark(['kept']);
      const undone = await umzug().down({ to: 0 });
      expect(undone.map((m) => m.name)).toEqual(NAMES(prefix).reverse());
      expect(await tr.dones(ns).isDone('kept')).toBe(true);
      expect((await umzug().up()).map((m) => m.name)).toEqual(NAMES(prefix));
      expect(await tablesOf(probe, prefix, ['umzug_meta'])).toEqual(await tablesOf(probe, reference));
      expect(await tr.dones(ns).areDone(['kept', 'other'])).toEqual(['kept']);
    });

    it('runs with the Sequelize instance itself as the context too, and rejects an invalid prefix with INVALID_NAME', async () => {
      const { probe, reference } = ref();
      const other = `${freshName('q')}_`;
      ref().prefixes.push(other);
      const ran = await new Umzug({
        migrations: taskrowMigrations({ prefix: other }),
        context: db,
        storage: new SequelizeStorage({ sequelize: db, tableName: `${other}umzug_meta` }),
        logger: undefined,
      }).up();
      expect(ran.length).toBe(MIGRATIONS.length);
      expect(await tablesOf(probe, other, ['umzug_meta'])).toEqual(await tablesOf(probe, reference));
      throwsCode(() => taskrowMigrations({ prefix: 'no-dashes!' }), 'INVALID_NAME');
    });
  });
}
