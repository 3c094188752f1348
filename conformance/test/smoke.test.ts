import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classify } from '@taskrow/core';
import { taskrow as mysql2Taskrow } from '@taskrow/mysql2';
import { REQUIRED_LOCAL, versionMatches } from '@taskrow/servers';
import { label, targets } from '../src/targets.js';

describe('server targets', () => {
  it('under CI, include MySQL 9.7, MariaDB 10.11 and MariaDB 11.8 unless the run was pointed at other servers', () => {
    const list = targets(); // throws when the global setup provided none
    if (process.env['CI'] !== 'true' || list.some((t) => t.source !== 'local')) return;
    for (const r of REQUIRED_LOCAL) {
      expect(
        list.some((t) => t.engine === r.engine && versionMatches(t.version, r.version)),
        `${r.engine} ${r.version}`,
      ).toBe(true);
    }
  });
});

for (const target of targets()) {
  describe(`${label(target)} · mysql2 driver · smoke`, () => {
    let a: mysql.Connection;
    let b: mysql.Connection;
    const table = `smoke_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

    beforeAll(async () => {
      a = await mysql.createConnection(target.url);
      b = await mysql.createConnection(target.url);
      await a.query(`CREATE TABLE \`${table}\` (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB`);
      await a.query(`INSERT INTO \`${table}\` VALUES (1, 10), (2, 20), (3, 30)`);
    });
    afterAll(async () => {
      await a?.query(`DROP TABLE IF EXISTS \`${table}\``).catch(() => undefined);
      await a?.end();
      await b?.end();
    });

    it('reports the engine and version the target was started as', async () => {
      const [rows] = await a.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
      const v = String(rows[0]?.['v']);
      expect(v.startsWith(target.version)).toBe(true);
      expect(/mariadb/i.test(v) ? 'mariadb' : 'mysql').toBe(target.engine);
    });

    it("taskrow's dialect reads a single server as no multi-writer cluster node", async () => {
      const tr = await mysql2Taskrow(a, { prefix: 'smoke_' });
      expect([tr.dialect.engine, tr.dialect.multiWriter]).toEqual([target.engine, false]);
    });

    it('SELECT ... FOR UPDATE SKIP LOCKED skips a row another open transaction holds', async () => {
      await a.beginTransaction();
      try {
        const [held] = await a.query<mysql.RowDataPacket[]>(`SELECT id FROM \`${table}\` WHERE id = 2 FOR UPDATE`);
        expect(held.map((r) => r['id'])).toEqual([2]);
        await b.beginTransaction();
        const [seen] = await b.query<mysql.RowDataPacket[]>(`SELECT id FROM \`${table}\` ORDER BY id FOR UPDATE SKIP LOCKED`);
        expect(seen.map((r) => r['id'])).toEqual([1, 3]);
        await b.rollback();
      } finally {
        await a.rollback();
      }
    });

    it(`NOWAIT on a held row fails with ${target.engine === 'mysql' ? '3572' : '1205'}`, async () => {
      await a.beginTransaction();
      try {
        await a.query(`SELECT id FROM \`${table}\` WHERE id = 3 FOR UPDATE`);
        await b.beginTransaction();
        const err = await b.query(`SELECT id FROM \`${table}\` WHERE id = 3 FOR UPDATE NOWAIT`).then(
          () => null,
          (e: { errno?: number }) => e,
        );
        await b.rollback();
        expect(err?.errno).toBe(target.engine === 'mysql' ? 3572 : 1205);
      } finally {
        await a.rollback();
      }
    });

    it(`a REPEATABLE READ write to a row changed after the snapshot ${target.engine === 'mysql' ? 'proceeds on MySQL' : 'fails with 1020 under snapshot isolation, which taskrow retries'}`, async () => {
      // MariaDB 11.6+ turns innodb_snapshot_isolation on by default; 10.11 has it off (set here to test both).
      if (target.engine === 'mariadb') await a.query('SET SESSION innodb_snapshot_isolation = ON');
      await a.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      await a.beginTransaction();
      try {
        await a.query(`SELECT v FROM \`${table}\` WHERE id = 1`);
        await b.query(`UPDATE \`${table}\` SET v = v + 1 WHERE id = 1`);
        const err = await a.query(`UPDATE \`${table}\` SET v = v + 1 WHERE id = 1`).then(
          () => null,
          (e: { errno?: number }) => e,
        );
        if (target.engine === 'mysql') expect(err).toBeNull();
        else {
          expect(err?.errno).toBe(1020);
          expect(classify({ errno: err!.errno })).toBe('retryable');
        }
      } finally {
        await a.rollback();
        if (target.engine === 'mariadb') await a.query('SET SESSION innodb_snapshot_isolation = DEFAULT');
      }
    });
  });
}
