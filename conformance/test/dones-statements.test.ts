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
  });
}
