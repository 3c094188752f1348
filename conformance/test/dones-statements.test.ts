import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTaskrow } from '@taskrow/core';
import { dropPrefix } from '@taskrow/core/conformance';
import { mysql2Client, type Mysql2Connection } from '@taskrow/mysql2';
import { counting } from '../src/counting.js';
import { mysql2Probe } from '../src/harnesses/mysql2.js';
import { label, targets } from '../src/targets.js';

// What a Dones mark costs in statements (Dones against bare SQL: issue "Performance"): a mark is
// one autocommit INSERT and one read confirming the generation it went to; a handle reads the
// namespace once, and the first mark of a new namespace creates it on the way.
for (const target of targets()) {
  describe(`${label(target)} · dones statements`, () => {
    const prefix = `ds${Date.now() % 1_000_000}_`;
    let pool: mysql.Pool;
    let probe: Awaited<ReturnType<typeof mysql2Probe>>;

    beforeAll(async () => {
      pool = mysql.createPool({ uri: target.url, connectionLimit: 4 });
      probe = await mysql2Probe(target.url);
      await (await createTaskrow<Mysql2Connection>({ client: mysql2Client(pool), joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } })).migrate();
    });
    afterAll(async () => {
      await dropPrefix(probe, prefix);
      await probe.end();
      await pool.end();
    });

    it('the first mark of a new namespace sends 5 statements (read it, make a generation, create it, INSERT, confirm); a new handle of it 3; its next mark 2', async () => {
      const { client, statements, matching } = counting(mysql2Client(pool));
      const tr = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const ns = `n${Date.now()}`;
      const sent = async (mark: () => Promise<unknown>): Promise<number> => {
        const before = statements();
        await mark();
        return statements() - before;
      };
      expect(await sent(() => tr.dones(ns).mark(['a', 'b']))).toBe(5);
      const second = tr.dones(ns);
      expect(await sent(() => second.mark(['c']))).toBe(3);
      expect(await sent(() => second.mark(['d', 'e']))).toBe(2);
      expect(matching(/^INSERT IGNORE INTO `[^`]+dones`/)).toBe(3);
      const marked = await probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${prefix}dones\` d JOIN \`${prefix}dones_ns\` s ON s.gen = d.gen WHERE s.name = ?`, [ns]);
      expect(Number(marked[0]!.n)).toBe(5);
    });

    it('a mark of 1,000 keys, an areDone over them and an unmark carry the keys in their text, not as 1,000 bound values, and the keys stay exact', async () => {
      const { client, sent, bound } = counting(mysql2Client(pool));
      const tr = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const dones = tr.dones(`h${Date.now()}`);
      // Bytes a driver would escape in a quoted string, multi-byte characters, and a key over 2,999 bytes (stored beside its index form).
      const odd = ["it's", 'back\\slash', 'nul\u0000byte', 'ünïcødé ✓ 𝄞', 'tab\tend ', `${'x'.repeat(3000)}-long`];
      const keys = [...odd, ...Array.from({ length: 994 }, (_, i) => `key-${i}`)];
      const texts = (re: RegExp): { sql: string; values: number }[] =>
        sent().flatMap((sql, i) => (re.test(sql) ? [{ sql, values: bound()[i]! }] : []));
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
