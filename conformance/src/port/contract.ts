import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classify, TaskrowError, type SqlClient } from '@taskrow/core';
import { freshName, targetLabel, type ConformanceTarget } from '@taskrow/core/conformance';
import { mysql2Probe } from '../harnesses/mysql2.js';
import type { PortFixture, PortSubject } from './subjects.js';

/** Connections in each fixture's pool: small, so a leaked connection shows at once. */
const POOL_SIZE = 2;

function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms (a pool connection leaked?)`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const rejection = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

/** A count or id the drivers may hand back as number, bigint or string. */
const toNumber = (v: unknown): number => Number(v);

/**
 * The `SqlClient` port contract, run against one adapter on every target: what the engine relies
 * on from every adapter (found-rows UPDATE counts, numeric ids, Buffer binding, row shapes,
 * isolation, joined transactions, error classes, and connections given back on every path).
 * Verified through a probe on its own mysql2 connection.
 */
export function describePortContract(subject: PortSubject, targets: readonly ConformanceTarget[]): void {
  for (const target of targets) {
    describe(`${targetLabel(target)} · ${subject.adapter} · port`, () => {
      let fx: PortFixture;
      let probe: Awaited<ReturnType<typeof mysql2Probe>>;
      const tables: string[] = [];
      /** A fresh table `(id BIGINT UNSIGNED AUTO_INCREMENT, v INT, b VARBINARY(300))` for one test. */
      async function freshTable(): Promise<string> {
        const t = `port_${freshName('t')}`;
        tables.push(t);
        await probe.query(
          `CREATE TABLE \`${t}\` (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL, b VARBINARY(300) NULL) ENGINE=InnoDB`,
        );
        return t;
      }
      const count = async (t: string, where = '1'): Promise<number> =>
        toNumber((await probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${t}\` WHERE ${where}`))[0]?.n);
      const client = (): SqlClient => fx.client;

      beforeAll(async () => {
        probe = await mysql2Probe(target.url);
        fx = await subject.open(target, POOL_SIZE);
      });
      afterAll(async () => {
        for (const t of tables) await probe?.query(`DROP TABLE IF EXISTS \`${t}\``);
        await fx?.end().catch(() => undefined);
        await probe?.end();
      });

      it('reports rows matched by an UPDATE, also when no value changes (found rows)', async () => {
        const t = await freshTable();
        await probe.query(`INSERT INTO \`${t}\` (id, v) VALUES (1, 5), (2, 5), (3, 7)`);
        expect((await client().query(`UPDATE \`${t}\` SET v = 5 WHERE v = ?`, [5])).affectedRows).toBe(2);
        expect((await client().query(`UPDATE \`${t}\` SET v = 7 WHERE id = ?`, [3])).affectedRows).toBe(1);
        expect((await client().query(`UPDATE \`${t}\` SET v = 8 WHERE id = ?`, [3])).affectedRows).toBe(1);
        expect((await client().query(`UPDATE \`${t}\` SET v = 8 WHERE id = ?`, [99])).affectedRows).toBe(0);
      });

      it('reports inserted and deleted rows and the first generated id, as numbers', async () => {
        const t = await freshTable();
        await probe.query(`ALTER TABLE \`${t}\` AUTO_INCREMENT = ${2 ** 40}`);
        const ins = await client().query(`INSERT INTO \`${t}\` (v) VALUES (?), (?), (?)`, [1, 2, 3]);
        expect(ins.affectedRows).toBe(3);
        expect(typeof ins.insertId).toBe('number');
        expect(ins.insertId).toBe(2 ** 40);
        expect(ins.rows).toEqual([]);
        // With found rows, an upsert that finds its row and changes nothing counts it once (not 0).
        const same = await client().query(`INSERT INTO \`${t}\` (id, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE id = id`, [2 ** 40, 9]);
        expect(same.affectedRows).toBe(1);
        const del = await client().query(`DELETE FROM \`${t}\` WHERE v >= ?`, [2]);
        expect(del.affectedRows).toBe(2);
        expect(await count(t)).toBe(1);
      });

      it('returns rows as plain objects: BIGINT as numbers, binary as Buffers, text as strings', async () => {
        const { rows } = await client().query<{ n: unknown; c: unknown; b: unknown; s: unknown }>(
          'SELECT CAST(? AS UNSIGNED) AS n, COUNT(*) AS c, ? AS b, ? AS s FROM (SELECT 1 AS x UNION ALL SELECT 2) AS two',
          [Number.MAX_SAFE_INTEGER, Buffer.from([0, 255]), 'é ✓'],
        );
        expect(rows.length).toBe(1);
        const row = rows[0]!;
        expect(Object.keys(row).sort()).toEqual(['b', 'c', 'n', 's']);
        expect(row.n).toBe(Number.MAX_SAFE_INTEGER);
        expect(row.c).toBe(2);
        expect(Buffer.isBuffer(row.b) && (row.b as Buffer).equals(Buffer.from([0, 255]))).toBe(true);
        expect(row.s).toBe('é ✓');
      });

      it('binds a Buffer of every byte value into VARBINARY and matches it by equality', async () => {
        const t = await freshTable();
        const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
        await client().query(`INSERT INTO \`${t}\` (v, b) VALUES (?, ?)`, [1, all]);
        const hex = await probe.query<{ h: string }>(`SELECT HEX(b) AS h FROM \`${t}\``);
        expect(hex[0]?.h).toBe(all.toString('hex').toUpperCase());
        const { rows } = await client().query<{ b: Buffer }>(`SELECT b FROM \`${t}\` WHERE b = ?`, [all]);
        expect(rows.length).toBe(1);
        expect(Buffer.compare(rows[0]!.b, all)).toBe(0);
        expect((await client().query(`SELECT b FROM \`${t}\` WHERE b = ?`, [all.subarray(0, 255)])).rows).toEqual([]);
      });

      it('rolls back a transaction whose statement failed and gives its connection back, every time', async () => {
        const t = await freshTable();
        for (let i = 0; i < 3 * POOL_SIZE; i++) {
          const err = await rejection(
            client().transaction(async (c) => {
              await c.query(`INSERT INTO \`${t}\` (id, v) VALUES (?, 1)`, [100 + i]);
              await c.query(`INSERT INTO \`${t}\` (id, v) VALUES (?, 2)`, [100 + i]); // duplicate key
            }),
          );
          expect(client().describeError(err).errno).toBe(1062);
          expect(classify(client().describeError(err))).toBe('other');
          expect(fx.inUse()).toBe(0);
        }
        expect(await count(t)).toBe(0);
        for (let i = 0; i < 3 * POOL_SIZE; i++) {
          expect(client().describeError(await rejection(client().query(`SELECT * FROM \`${t}_missing\``))).errno).toBe(1146);
        }
        const done = await within(
          20_000,
          Promise.all(
            Array.from({ length: 4 * POOL_SIZE }, (_, i) =>
              client().transaction(async (c) => (await c.query(`INSERT INTO \`${t}\` (v) VALUES (?)`, [i])).affectedRows),
            ),
          ),
          'transactions after failures',
        );
        expect(done).toEqual(Array(4 * POOL_SIZE).fill(1));
        expect(await count(t)).toBe(4 * POOL_SIZE);
        expect(fx.inUse()).toBe(0);
      });

      it('rolls back and gives the connection back when the work itself throws', async () => {
        const t = await freshTable();
        for (let i = 0; i < 3 * POOL_SIZE; i++) {
          const boom = new Error(`boom ${i}`);
          const err = await rejection(
            client().transaction(async (c) => {
              await c.query(`INSERT INTO \`${t}\` (v) VALUES (?)`, [i]);
              throw boom;
            }),
          );
          expect(err).toBe(boom);
        }
        expect(fx.inUse()).toBe(0);
        expect(await count(t)).toBe(0);
        expect(
          await within(
            20_000,
            client().transaction(async (c) => (await c.query('SELECT 1 AS one')).rows),
            'a transaction after throws',
          ),
        ).toEqual([{ one: 1 }]);
      });

      it('runs a transaction at the isolation level asked for', async () => {
        const t = await freshTable();
        await probe.query(`INSERT INTO \`${t}\` (v) VALUES (1)`);
        const reads = (isolation: 'READ COMMITTED' | 'REPEATABLE READ') =>
          client().transaction(
            async (c) => {
              const n = async (): Promise<number> => toNumber((await c.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${t}\``)).rows[0]?.n);
              const before = await n();
              await probe.query(`INSERT INTO \`${t}\` (v) VALUES (2)`); // committed by another connection meanwhile
              return [before, await n()];
            },
            { isolation },
          );
        expect(await reads('READ COMMITTED')).toEqual([1, 2]);
        expect(await reads('REPEATABLE READ')).toEqual([2, 2]);
        expect(fx.inUse()).toBe(0);
      });

      it('joins the application transaction: nothing is visible before it commits, nothing stays after a rollback', async () => {
        const t = await freshTable();
        const write = async (j: SqlClient): Promise<void> => {
          expect(j.joined).toBe(true);
          await j.query(`INSERT INTO \`${t}\` (v) VALUES (?)`, [1]);
          await j.transaction(async (c) => c.query(`INSERT INTO \`${t}\` (v) VALUES (?)`, [2]));
          expect((await j.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${t}\``)).rows[0]?.n).toBe(2);
          expect(await count(t)).toBe(0);
        };
        await fx.withJoined('rollback', write);
        expect(await count(t)).toBe(0);
        await fx.withJoined('commit', write);
        expect(await count(t)).toBe(2);
        expect(fx.inUse()).toBe(0);
      });

      it('describes a failed statement of a joined client by its errno, and the transaction stays usable', async () => {
        const t = await freshTable();
        await fx.withJoined('commit', async (j) => {
          await j.query(`INSERT INTO \`${t}\` (id, v) VALUES (1, 1)`);
          const err = await rejection(j.query(`INSERT INTO \`${t}\` (id, v) VALUES (1, 2)`));
          expect(j.describeError(err).errno).toBe(1062);
          expect(classify(j.describeError(err))).toBe('other');
          await j.query(`INSERT INTO \`${t}\` (id, v) VALUES (2, 2)`);
        });
        expect(await count(t)).toBe(2);
      });

      it('describes a connection killed inside a transaction as lost, and the pool recovers', async () => {
        const err = await rejection(
          client().transaction(async (c) => {
            const id = toNumber((await c.query<{ id: unknown }>('SELECT CONNECTION_ID() AS id')).rows[0]?.id);
            await probe.query(`KILL ${id}`);
            await c.query('SELECT 1');
          }),
        );
        expect(err).toBeDefined();
        expect(classify(client().describeError(err))).toBe('lost');
        expect(fx.inUse()).toBe(0);
        const again = await within(
          20_000,
          Promise.all(Array.from({ length: 2 * POOL_SIZE }, () => client().transaction(async (c) => (await c.query('SELECT 2 AS two')).rows))),
          'transactions after a kill',
        );
        expect(again).toEqual(Array(2 * POOL_SIZE).fill([{ two: 2 }]));
      });

      it('describes an ended client as closed, and its factory rejects it with INVALID_CLIENT', async () => {
        const ended = await subject.open(target, 1);
        expect((await ended.client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
        await ended.end();
        const err = await rejection(ended.client.query('SELECT 1 AS one'));
        expect(classify(ended.client.describeError(err))).toBe('closed');
        const made = await rejection(ended.connect());
        expect(made).toBeInstanceOf(TaskrowError);
        expect((made as TaskrowError).code).toBe('INVALID_CLIENT');
      });
    });
  }
}
