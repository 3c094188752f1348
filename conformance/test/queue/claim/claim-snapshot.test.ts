import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { createTaskrow } from '@taskrow/core';
import { mysql2Client, type Mysql2Connection } from '@taskrow/mysql2';
import { counting } from '../../../src/counting.js';
import { useMigratedPool } from '../../../src/setup.js';
import { label, targets } from '../../../src/targets.js';

// A claim's locking read also reads, in subqueries, whether the queue is paused or rate-limited and
// whether due jobs wait. With `innodb_snapshot_isolation` ON (MariaDB's default from 11.6), such a
// statement fails with 1020 whenever its locking read meets a row committed after the statement
// began, at READ COMMITTED too: under producers committing all the time, claims retried until they
// gave up. taskrow sends it with the variable OFF for that statement (`Dialect.snapshotCheckedLocks`).
// MariaDB only: MySQL has no such variable.
const READS = 200;
const READY = 3000;
const LIMIT = 1000;

for (const target of targets().filter((t) => t.engine === 'mariadb')) {
  describe(`${label(target)} · claim under snapshot isolation`, () => {
    const prefix = `cs${Date.now() % 1_000_000}_`;
    const jobs = `\`${prefix}queue_jobs\``;
    const db = useMigratedPool(target, { prefix });

    /**
     * Runs `sql` (the claim's gated read of queue `queue`) `READS` times at READ COMMITTED, each in
     * a transaction rolled back after it, with `innodb_snapshot_isolation` ON for the session, while
     * another connection commits ready jobs into the middle of the range it reads; resolves to the
     * reads that failed with 1020.
     */
    async function readsFailing(sql: string, queue: string, base: string): Promise<number> {
      const reader = await mysql.createConnection(target.url);
      const writer = await mysql.createConnection(target.url);
      let writing = true;
      const inserts = (async () => {
        for (let i = 0; writing; i++) {
          // Due among the first LIMIT rows the reads walk (2 to 3 s before `base`), ahead of where they are.
          await writer.query(
            `INSERT INTO ${jobs} (queue, grp, phase, priority, ready_priority, due_at, run_at, max_attempts, token, payload, created_at)
             VALUES (?, '', 0, 0, 0, CAST(? AS DATETIME(6)) - INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6), 5, 1, '0', UTC_TIMESTAMP(6))`,
            [queue, base, 2_000_000 + ((i * 7919) % 1_000_000)],
          );
        }
      })();
      let failed = 0;
      try {
        await reader.query('SET SESSION innodb_snapshot_isolation = ON');
        for (let i = 0; i < READS; i++) {
          await reader.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
          await reader.query('BEGIN');
          await reader.query(sql, [queue, queue, queue, queue]).catch((err: { errno?: number }) => {
            if (err.errno !== 1020) throw err;
            failed += 1;
          });
          await reader.query('ROLLBACK');
        }
      } finally {
        writing = false;
        await inserts;
        await reader.end();
        await writer.end();
      }
      return failed;
    }

    it(`the claim's locking read with its gate never fails with 1020 while jobs are committed into its range (${READS} reads); the same read without SET STATEMENT does`, async () => {
      const { client, sent } = counting(mysql2Client(db.pool));
      const tr = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      await tr.queue('taken').enqueue(1);
      const before = sent().length;
      expect(await tr.queue('taken').claim({ limit: LIMIT, lease: 600_000 })).toHaveLength(1);
      const read = sent()
        .slice(before)
        .find((sql) => / AS due\b/.test(sql) && /FOR UPDATE SKIP LOCKED/.test(sql));
      expect(read, 'the claim reads its gate with its locking read').toBeDefined();
      expect(read!.match(/\?/g)).toHaveLength(4);
      // The ready rows the reads walk: due 1 ms apart over the 3 s before `base`.
      const base = (await db.probe.query<{ base: string }>('SELECT CAST(UTC_TIMESTAMP(6) AS CHAR) AS base'))[0]!.base;
      for (const queue of ['sent', 'bare']) {
        const rows = Array.from(
          { length: READY },
          (_, i) => `(?, '', 0, 0, 0, CAST(? AS DATETIME(6)) - INTERVAL ${(i + 1) * 1000} MICROSECOND, UTC_TIMESTAMP(6), 5, 1, '0', UTC_TIMESTAMP(6))`,
        );
        await db.probe.query(
          `INSERT INTO ${jobs} (queue, grp, phase, priority, ready_priority, due_at, run_at, max_attempts, token, payload, created_at) VALUES ${rows.join(', ')}`,
          rows.flatMap(() => [queue, base]),
        );
      }
      const bare = read!.replace(/^SET STATEMENT innodb_snapshot_isolation = OFF FOR /, '');
      expect(await readsFailing(read!, 'sent', base)).toBe(0);
      expect(await readsFailing(bare, 'bare', base), 'the check: without SET STATEMENT the same reads fail').toBeGreaterThan(0);
    });
  });
}
