import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { createTaskrow } from '@taskrow/core';
import { runningStatement } from '@taskrow/core/conformance';
import { mysql2Client, type Mysql2Connection } from '@taskrow/mysql2';
import { counting } from '../../src/counting.js';
import { until, useMigratedPool } from '../../src/setup.js';
import { label, targets } from '../../src/targets.js';

// What a Dones mark costs in statements (Dones against bare SQL: issue "Performance"): a mark is
// one autocommit INSERT ... SELECT that reads the namespace's generation with a share lock; a
// taskrow reads whether a namespace exists once (creating it when it does not) before its first
// mark there.
for (const target of targets()) {
  describe(`${label(target)} · dones statements`, () => {
    const prefix = `ds${Date.now() % 1_000_000}_`;
    const db = useMigratedPool(target, { prefix });

    it("the first mark of a new namespace sends 4 statements (read it, make a generation, create it, the INSERT); every later mark of that taskrow 1, from a new handle too; another taskrow's first mark 2", async () => {
      const { client, statements, matching } = counting(mysql2Client(db.pool));
      const tr = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const other = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const ns = `n${Date.now()}`;
      const sent = async (mark: () => Promise<unknown>): Promise<number> => {
        const before = statements();
        await mark();
        return statements() - before;
      };
      expect(await sent(() => tr.dones(ns).mark(['a', 'b']))).toBe(4);
      const second = tr.dones(ns);
      expect(await sent(() => second.mark(['c']))).toBe(1);
      expect(await sent(() => second.mark(['d']))).toBe(1);
      expect(await sent(() => other.dones(ns).mark(['e']))).toBe(2);
      expect(await sent(() => other.dones(ns).mark(['e', 'f']))).toBe(1);
      expect(matching(/^INSERT IGNORE INTO `[^`]+dones`/)).toBe(5);
      const marked = await db.probe.query<{ n: unknown }>(
        `SELECT COUNT(*) AS n FROM \`${prefix}dones\` d JOIN \`${prefix}dones_ns\` s ON s.gen = d.gen WHERE s.name = ?`,
        [ns],
      );
      expect(Number(marked[0]!.n)).toBe(6);
    });

    it('a mark whose namespace row is gone (deleted by hand after the taskrow saw it) makes the row again and marks into it', async () => {
      const { client, statements } = counting(mysql2Client(db.pool));
      const tr = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const ns = `g${Date.now()}`;
      expect(await tr.dones(ns).mark(['a'])).toBe(1);
      await db.probe.query(`DELETE FROM \`${prefix}dones_ns\` WHERE \`name\` = ?`, [ns]);
      const before = statements();
      expect(await tr.dones(ns).mark(['a', 'b'])).toBe(2); // a new generation: 'a' is not done there
      expect(statements() - before).toBe(4); // the INSERT finding no row, a generation, the row, the INSERT again
      expect(await tr.dones(ns).areDone(['a', 'b', 'c'])).toEqual(['a', 'b']);
    });

    it('at READ COMMITTED too, a mark waits for an uncommitted clear() of its namespace and writes to the new generation', async () => {
      // A plain read of the namespace's generation inside the INSERT ... SELECT would be a consistent
      // read at READ COMMITTED (no lock), and the mark would land in the generation being retired.
      const rc = mysql.createPool({ uri: target.url, connectionLimit: 2 });
      rc.on('connection', (conn) => void conn.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED'));
      const clearing = await mysql.createConnection(target.url);
      try {
        const tr = await createTaskrow<Mysql2Connection>({ client: mysql2Client(rc), joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
        const [iso] = await rc.query<mysql.RowDataPacket[]>("SHOW SESSION VARIABLES WHERE Variable_name IN ('transaction_isolation', 'tx_isolation')");
        expect(iso.map((r) => r['Value'])).toContain('READ-COMMITTED');
        const ns = `rc${Date.now()}`;
        const d = tr.dones(ns);
        expect(await d.mark(['old'])).toBe(1);
        await clearing.query('BEGIN');
        await tr.in(clearing).dones(ns).clear({ purge: 'none' });
        let settled = false;
        const marked = d.mark(['new-1', 'new-2']);
        marked.then(
          () => (settled = true),
          () => (settled = true),
        );
        const waiting = async (): Promise<boolean> => settled || (await runningStatement(db.probe, target.engine, `INSERT IGNORE INTO \`${prefix}dones\``)) > 0;
        await until('the mark to run', waiting, 10);
        const settledWhileHeld = settled;
        await clearing.query('COMMIT');
        expect(settledWhileHeld).toBe(false);
        expect(await marked).toBe(2);
        const rows = await db.probe.query<{ k: Buffer; current: unknown }>(
          `SELECT d.k, d.gen = s.gen AS current FROM \`${prefix}dones\` d JOIN \`${prefix}dones_gen\` g ON g.gen = d.gen JOIN \`${prefix}dones_ns\` s ON s.name = g.ns WHERE g.ns = ? ORDER BY d.k`,
          [ns],
        );
        expect(rows.map((r) => [r.k.toString(), Number(r.current)])).toEqual([
          ['new-1', 1],
          ['new-2', 1],
          ['old', 0],
        ]);
      } finally {
        await clearing.end();
        await rc.end();
      }
    });

    it('a mark of 1,000 keys, an areDone over them and an unmark carry the keys in their text, not as 1,000 bound values, and the keys stay exact', async () => {
      const { client, sent, bound } = counting(mysql2Client(db.pool));
      const tr = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const dones = tr.dones(`h${Date.now()}`);
      // Bytes a driver would escape in a quoted string, multi-byte characters, and a key over 2,999 bytes (stored beside its index form).
      const odd = ["it's", 'back\\slash', 'nul\u0000byte', 'ünïcødé ✓ 𝄞', 'tab\tend ', `${'x'.repeat(3000)}-long`];
      const keys = [...odd, ...Array.from({ length: 994 }, (_, i) => `key-${i}`)];
      const texts = (re: RegExp): { sql: string; values: number }[] => sent().flatMap((sql, i) => (re.test(sql) ? [{ sql, values: bound()[i]! }] : []));
      expect(await dones.mark(keys)).toBe(1000);
      expect(await dones.areDone([...odd, 'key-993', 'key-994', "it''s"])).toEqual([...odd, 'key-993']);
      expect(await dones.unmark(odd)).toBe(odd.length);
      expect(await dones.areDone([...odd, 'key-0'])).toEqual(['key-0']);
      for (const re of [/^INSERT IGNORE INTO `[^`]+dones`/, /^SELECT `k` FROM `[^`]+dones`/, /^DELETE FROM `[^`]+dones`/]) {
        const found = texts(re);
        expect(found.length, String(re)).toBeGreaterThan(0);
        for (const f of found) expect(f.values, f.sql.slice(0, 80)).toBeLessThanOrEqual(1);
      }
      expect(texts(/^INSERT IGNORE INTO `[^`]+dones`/)[0]!.sql).toContain(`X'${Buffer.from('ünïcødé ✓ 𝄞').toString('hex')}'`);
    });
  });
}
