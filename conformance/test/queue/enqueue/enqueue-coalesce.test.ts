import type mysql from 'mysql2/promise';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTaskrow, TaskrowError, type QueryOptions, type SessionOptions, type SqlClient, type SqlConnection, type SqlValue } from '@taskrow/core';
import { mysql2Client, type Mysql2Connection } from '@taskrow/mysql2';
import { useMigratedPool } from '../../../src/setup.js';
import { label, targets } from '../../../src/targets.js';

/**
 * Single `enqueue()` calls that one process makes of one queue while another is in flight leave
 * together as one batch CALL. These cases count the CALLs a real server receives, check each job's
 * row against what its own caller asked, make the server refuse one job of a batch (a trigger), and
 * check that a transaction's or a dedup key's enqueue is never gathered.
 */
for (const target of targets()) {
  describe(`${label(target)} · mysql2 · concurrent enqueues gathered`, () => {
    const prefix = `ec${process.pid.toString(36)}_`;
    const jobs = `${prefix}queue_jobs`;
    const db = useMigratedPool(target, { prefix, connectionLimit: 8 });
    let pool: mysql.Pool;
    /** The statements sent through the counted client, in order. */
    const sent: string[] = [];
    let loseNextBatch = false;
    let counted: Awaited<ReturnType<typeof createTaskrow<Mysql2Connection>>>;

    beforeAll(async () => {
      pool = db.pool;
      // Every statement sent, through the pool or through the application's transaction, is noted.
      // With `loseNextBatch`, the next batch CALL fails as a lost connection before it reaches the server.
      const lose = (sql: string): boolean => loseNextBatch && /^CALL `?[a-z0-9_]+enqueue_jobs/.test(sql) && !(loseNextBatch = false);
      const lost = (): Promise<never> =>
        Promise.reject(Object.assign(new Error('Connection lost: the test dropped it'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true }));
      const note = <C extends SqlConnection>(conn: C): C =>
        ({
          ...conn,
          query: (sql: string, params?: readonly SqlValue[], options?: QueryOptions) => (
            sent.push(sql), lose(sql) ? lost() : (conn as unknown as SqlClient).query(sql, params, options)
          ),
        }) as C;
      const noting = <C extends SqlClient>(inner: C): C => ({
        ...note(inner),
        transaction: (fn, options) => inner.transaction((conn) => fn(note(conn)), options),
        ...(inner.session === undefined ? {} : { session: (options?: SessionOptions) => noting(inner.session!(options)) }),
      });
      counted = await createTaskrow<Mysql2Connection>({
        client: noting(mysql2Client(pool)),
        joinTransaction: (tx) => noting(mysql2Client(tx, true)),
        options: { prefix },
      });
    });

    /** The enqueue CALLs sent since `from`, as `batch` (`enqueue_jobs`, ringing or not) or `one` (`enqueue_job` and its ringing forms). */
    const calls = (from: number): string[] =>
      sent.slice(from).flatMap((sql) => {
        const procedure = /^CALL `?([a-z0-9_]+)`?\(/.exec(sql)?.[1]?.slice(prefix.length);
        return procedure?.startsWith('enqueue_jobs') ? ['batch'] : procedure?.startsWith('enqueue_job') ? ['one'] : [];
      });
    const rowsOf = async (queue: string): Promise<Map<number, mysql.RowDataPacket>> => {
      const [rows] = await pool.query<mysql.RowDataPacket[]>(
        'SELECT id, grp, priority, max_attempts, TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), due_at) AS ahead, payload FROM ?? WHERE queue = ?',
        [jobs, queue],
      );
      return new Map(rows.map((r) => [Number(r['id']), r]));
    };

    it('100 enqueues asked at once leave as 4 batch CALLs (32 + 32 + 32 + 4), each job in its own row with its own options', async () => {
      const q = counted.queue(`all${Date.now()}`);
      const from = sent.length;
      const opts = (i: number) => (i % 3 === 1 ? { priority: i, group: `g${i}` } : i % 3 === 2 ? { delay: 3_600_000, maxAttempts: 2 } : undefined);
      const out = await Promise.all(Array.from({ length: 100 }, (_, i) => q.enqueue({ i }, opts(i))));
      expect(calls(from)).toEqual(['batch', 'batch', 'batch', 'batch']);
      expect(new Set(out.map((e) => e.id)).size).toBe(100);
      const stored = await rowsOf(q.name);
      expect(stored.size).toBe(100);
      for (const [i, e] of out.entries()) {
        const r = stored.get(e.id)!;
        expect([JSON.parse(String(r['payload'])), r['grp'], Number(r['priority']), Number(r['max_attempts'])]).toEqual([
          { i },
          i % 3 === 1 ? `g${i}` : '',
          i % 3 === 1 ? i : 0,
          i % 3 === 2 ? 2 : 5,
        ]);
        if (i % 3 === 2) expect(Number(r['ahead'])).toBeGreaterThan(3500);
        else expect(Number(r['ahead'])).toBeLessThanOrEqual(0);
      }
    });

    it("an enqueue awaited before the next is asked leaves alone, as one job's CALL", async () => {
      const q = counted.queue(`one${Date.now()}`);
      const from = sent.length;
      for (let i = 0; i < 3; i++) await q.enqueue({ i });
      expect(calls(from)).toEqual(['one', 'one', 'one']);
      expect((await rowsOf(q.name)).size).toBe(3);
    });

    it('when the server refuses one job of a batch, only its caller sees the error: the other 9 are stored once each', async () => {
      // Refuses any row whose payload names the poison, inside whatever statement inserts it.
      await pool.query(
        `CREATE TRIGGER \`${prefix}poison\` BEFORE INSERT ON \`${jobs}\` FOR EACH ROW IF CAST(NEW.payload AS CHAR) LIKE '%poison%' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'poisoned job'; END IF`,
      );
      try {
        const q = counted.queue(`p${Date.now()}`);
        const from = sent.length;
        const settled = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => q.enqueue(i === 6 ? { i, poison: true } : { i })));
        // The batch was sent once, refused whole, then each job alone.
        expect(calls(from)).toEqual(['batch', ...Array.from({ length: 10 }, () => 'one')]);
        const refused = settled.flatMap((s, i) => (s.status === 'rejected' ? [[i, s.reason]] : []));
        expect(refused.map(([i]) => i)).toEqual([6]);
        expect(refused[0]![1]).toBeInstanceOf(TaskrowError);
        expect(String((refused[0]![1] as Error).message)).toMatch(/poisoned job/);
        const stored = await rowsOf(q.name);
        const ids = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.id] : []));
        expect(ids.map((id) => JSON.parse(String(stored.get(id)?.['payload'])))).toEqual([0, 1, 2, 3, 4, 5, 7, 8, 9].map((i) => ({ i })));
        expect(stored.size).toBe(9);
      } finally {
        await pool.query(`DROP TRIGGER IF EXISTS \`${prefix}poison\``);
      }
    });

    it('a batch refused on its retry after a lost connection is not sent again job by job: every caller sees the error, as its outcome is unknown', async () => {
      await pool.query(
        `CREATE TRIGGER \`${prefix}poison\` BEFORE INSERT ON \`${jobs}\` FOR EACH ROW IF CAST(NEW.payload AS CHAR) LIKE '%poison%' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'poisoned job'; END IF`,
      );
      try {
        const q = counted.queue(`l${Date.now()}`);
        const from = sent.length;
        loseNextBatch = true;
        const settled = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => q.enqueue(i === 6 ? { i, poison: true } : { i })));
        // The lost CALL, then its retry, refused: no job is sent alone.
        expect(calls(from)).toEqual(['batch', 'batch']);
        expect(settled.map((s) => s.status)).toEqual(Array.from({ length: 10 }, () => 'rejected'));
        expect(settled.map((s) => (s.status === 'rejected' ? (s.reason as TaskrowError).code : s.status))).toEqual(
          Array.from({ length: 10 }, () => 'DATABASE_ERROR'),
        );
        expect((await rowsOf(q.name)).size).toBe(0);
      } finally {
        loseNextBatch = false;
        await pool.query(`DROP TRIGGER IF EXISTS \`${prefix}poison\``);
      }
    });

    it("enqueues with a dedup key, or in the application's transaction, are never gathered", async () => {
      const q = counted.queue(`k${Date.now()}`);
      let from = sent.length;
      const keyed = await Promise.all(Array.from({ length: 5 }, (_, i) => q.enqueue({ i }, { dedupKey: `d${i}` })));
      // Each alone: its own transaction's INSERT, no CALL.
      expect(calls(from)).toEqual([]);
      expect(sent.slice(from).filter((sql) => sql.startsWith(`INSERT INTO \`${jobs}\``))).toHaveLength(5);
      expect(keyed.some((e) => e.deduplicated)).toBe(false);
      const conn = await pool.getConnection();
      try {
        await conn.beginTransaction();
        const inTx = counted.in(conn).queue(q.name);
        from = sent.length;
        const out = await Promise.all(Array.from({ length: 5 }, (_, i) => inTx.enqueue({ tx: i })));
        // Five INSERTs in the transaction, no CALL (a CALL commits on its own).
        expect(calls(from)).toEqual([]);
        expect(sent.slice(from).filter((sql) => sql.startsWith(`INSERT INTO \`${jobs}\``))).toHaveLength(5);
        await conn.rollback();
        const stored = await rowsOf(q.name);
        expect(out.some((e) => stored.has(e.id))).toBe(false);
        expect(stored.size).toBe(5);
      } finally {
        conn.release();
      }
    });
  });
}
