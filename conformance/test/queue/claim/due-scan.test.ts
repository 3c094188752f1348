import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTaskrow } from '@taskrow/core';
import { mysql2Client, type Mysql2Connection } from '@taskrow/mysql2';
import { counting } from '../../../src/counting.js';
import { useMigratedPool } from '../../../src/setup.js';
import { label, targets } from '../../../src/targets.js';

// Every claim also asks whether due delayed jobs or expired leases wait. The range of leases starts
// with the leases of the jobs completed since the last purge (deleted rows, whose index entries wait
// for purge), and MariaDB walks all of them when it reads that range ascending whenever a
// transaction older than those deletes is open, as under any load: its claims read it descending
// (`Dialect.rangeEndStops`). MariaDB only: MySQL's claims keep the ascending read, and its ANALYZE
// reports no pages.
const COMPLETED = 3000;
/** Pages the question may read: walking the completed jobs' entries reads about two each. */
const PAGES = 300;

/** The pages MariaDB's `ANALYZE FORMAT=JSON` reports for every table it read (`r_engine_stats`). */
function tablePages(plan: unknown): number {
  if (Array.isArray(plan)) return plan.reduce((n: number, p) => n + tablePages(p), 0);
  if (plan === null || typeof plan !== 'object') return 0;
  const own = (plan as { r_engine_stats?: { pages_accessed?: number } }).r_engine_stats?.pages_accessed ?? 0;
  return own + Object.entries(plan).reduce((n, [k, v]) => (k === 'r_engine_stats' ? n : n + tablePages(v)), 0);
}

for (const target of targets().filter((t) => t.engine === 'mariadb')) {
  describe(`${label(target)} · due scan`, () => {
    const prefix = `du${Date.now() % 1_000_000}_`;
    const db = useMigratedPool(target, { prefix });
    let old: mysql.Connection;

    // Registered after the pool's hooks: the old transaction ends before the prefix is dropped.
    beforeAll(async () => {
      old = await mysql.createConnection(target.url);
    });
    afterAll(async () => {
      await old.query('ROLLBACK').catch(() => undefined);
      await old.end();
    });

    it(`a claim asks whether due jobs wait in at most ${PAGES} pages while ${COMPLETED} completed jobs wait for purge behind an open write transaction`, async () => {
      const { client, sent } = counting(mysql2Client(db.pool));
      const tr = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const q = tr.queue('scan');
      // A write transaction older than every delete below: purge keeps their entries.
      await old.query(`CREATE TABLE IF NOT EXISTS \`${prefix}older\` (\`a\` INT PRIMARY KEY)`);
      await old.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
      await old.query(`INSERT INTO \`${prefix}older\` VALUES (1)`);
      await q.enqueueMany(Array.from({ length: COMPLETED }, (_, i) => ({ payload: { i } })));
      for (let done = 0; done < COMPLETED; ) {
        const jobs = await q.claim({ limit: 100, lease: 600_000 });
        expect(jobs.length).toBeGreaterThan(0);
        await q.complete(jobs);
        done += jobs.length;
      }
      await q.enqueueMany(Array.from({ length: 5 }, (_, i) => ({ payload: { i } })));
      const before = sent().length;
      expect(await q.claim({ limit: 1, lease: 600_000 })).toHaveLength(1);
      const read = sent()
        .slice(before)
        .find((sql) => / AS due\b/.test(sql) && /FOR UPDATE SKIP LOCKED/.test(sql));
      expect(read, 'the claim reads whether due jobs wait with its locking read').toBeDefined();
      // The question alone, as the claim asks it (its one parameter is the queue).
      const expr = /, (EXISTS \(SELECT 1 .*?UTC_TIMESTAMP\(6\)\)|\(\(SELECT 1 .*? LIMIT 1\) IS NOT NULL\)) AS due\b/s.exec(read!)?.[1];
      expect(expr, 'the question in the claim').toBeDefined();
      const question = `SELECT ${expr} AS due`;
      const conn = await db.pool.getConnection();
      try {
        const [[answer]] = await conn.query<mysql.RowDataPacket[]>(question, ['scan']);
        expect(Number(answer!['due'])).toBe(0);
        const [rows] = await conn.query<mysql.RowDataPacket[]>(`ANALYZE FORMAT=JSON ${question}`, ['scan']);
        const pages = tablePages(JSON.parse(String(Object.values(rows[0]!)[0])));
        expect(pages, 'pages reported').toBeGreaterThan(0);
        expect(pages).toBeLessThan(PAGES);
        // The same question finds a lease that has expired (moved back on the database clock here).
        await conn.query(`UPDATE \`${prefix}queue_jobs\` SET \`due_at\` = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE \`queue\` = 'scan' AND \`phase\` = 2`);
        const [[expired]] = await conn.query<mysql.RowDataPacket[]>(question, ['scan']);
        expect(Number(expired!['due'])).toBe(1);
      } finally {
        conn.release();
        await old.query('ROLLBACK');
      }
    });
  });
}
