import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import mysql from 'mysql2/promise';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTaskrow, type QueryOptions, type SqlClient, type SqlResult, type SqlValue, type Taskrow } from '@taskrow/core';
import { dropPrefix, runningStatement } from '@taskrow/core/conformance';
import { mysql2Client, type Mysql2Connection } from '@taskrow/mysql2';
import { until, useMigratedPool } from '../../../src/setup.js';
import { label, targets } from '../../../src/targets.js';

/** What the lossy client reports instead of a COMMIT's reply: a lost connection. */
class LostReply extends Error {
  readonly code = 'PROTOCOL_CONNECTION_LOST';
}

/** Which transactions lose their reply: all (the default), or those whose statements match. */
type Match = (statements: readonly string[]) => boolean;

type Lossy = SqlClient & {
  lose(n: number, when?: 'after' | 'before', only?: Match): void;
  lost: number;
  lostStatements: string[][];
  statements: number;
  transactions: number;
  units: string[][];
};

/**
 * A client whose next `lose` transactions (of those `only` matches, and statements in autocommit
 * when `only` is given) really commit (or, with
 * `before`, roll back) and then report a lost connection, as a connection that dies while the
 * COMMIT's reply is on its way does. taskrow must then find out what the lost run did instead of
 * doing it twice.
 */
function lossy(inner: SqlClient): Lossy {
  let pending = 0;
  let when: 'after' | 'before' = 'after';
  let only: Match = () => true;
  // Statements in autocommit lose their reply only when `lose` was given a match (so that a
  // background statement never takes a loss meant for a transaction).
  let statementsToo = false;
  const client = {
    adapter: inner.adapter,
    joined: false,
    endsInterrupted: inner.endsInterrupted,
    lost: 0,
    /** The statements of each transaction whose reply was lost. */
    lostStatements: [] as string[][],
    lose(n: number, w: 'after' | 'before' = 'after', match?: Match) {
      [pending, when, only, statementsToo] = [n, w, match ?? (() => true), match !== undefined];
    },
    /** Every unit of work sent: a statement in autocommit as `[sql]`, a transaction as its statements. */
    units: [] as string[][],
    describeError: (err: unknown) => (err instanceof LostReply ? { lost: true, code: err.code } : inner.describeError(err)),
    /** Statements run outside a transaction (an enqueue's CALL among them), and transactions begun. */
    statements: 0,
    transactions: 0,
    async query<Row>(sql: string, params?: readonly SqlValue[], options?: QueryOptions): Promise<SqlResult<Row>> {
      client.statements += 1;
      client.units.push([sql]);
      // One statement in autocommit: it commits (or, `before`, never reaches the server) and its reply is lost.
      const drop = (): boolean => {
        if (!statementsToo || pending === 0 || !only([sql])) return false;
        pending -= 1;
        client.lost += 1;
        client.lostStatements.push([sql]);
        return true;
      };
      if (when === 'before' && drop()) throw new LostReply('connection lost before the statement reached the server');
      const result = await inner.query<Row>(sql, params, options);
      if (when === 'after' && drop()) throw new LostReply('connection lost after the statement, before its reply');
      return result;
    },
    async transaction<T>(body: Parameters<SqlClient['transaction']>[0], options?: Parameters<SqlClient['transaction']>[1]): Promise<T> {
      client.transactions += 1;
      const seen: string[] = [];
      client.units.push(seen);
      const fn: typeof body = (conn) => body({ query: (sql, params) => (seen.push(sql), conn.query(sql, params)) } as typeof conn);
      // Only a transaction that starts after lose() can lose its reply (not one already running).
      const armed = pending > 0;
      const drop = (): boolean => {
        if (!armed || pending === 0 || !only(seen)) return false;
        pending -= 1;
        client.lost += 1;
        client.lostStatements.push(seen);
        return true;
      };
      if (when === 'before') {
        let dropped = false;
        return (await inner
          .transaction(async (conn) => {
            const result = await fn(conn);
            if ((dropped = drop())) throw new LostReply('connection lost before COMMIT');
            return result;
          }, options)
          .catch((err: unknown) => {
            throw dropped ? new LostReply('connection lost before COMMIT') : err;
          })) as T;
      }
      const result = (await inner.transaction(fn, options)) as T;
      if (drop()) throw new LostReply('connection lost after COMMIT, before its reply');
      return result;
    },
  };
  return client as Lossy;
}

for (const target of targets()) {
  describe(`${label(target)} · mysql2 · exact retries after a lost reply`, () => {
    const prefix = `xr${process.pid.toString(36)}_`;
    const srv = useMigratedPool(target, { prefix });
    /** The pool's client losing the replies it is told to, and taskrow over it. */
    let client: ReturnType<typeof lossy>;
    let tr: Taskrow<Mysql2Connection>;
    const rows = async <R>(sql: string, params: unknown[] = []): Promise<R[]> => srv.probe.query<R>(sql, params);

    beforeAll(async () => {
      client = lossy(mysql2Client(srv.pool));
      tr = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
    });

    const jobsOf = (queue: string) =>
      rows<{ id: number; phase: number; attempt: number; token: number }>(
        `SELECT id, phase, attempt, token FROM \`${prefix}queue_jobs\` WHERE queue = ? ORDER BY id`,
        [queue],
      );

    /** A unit of work that writes jobs: an enqueue's CALL, or a transaction inserting into the jobs table. */
    const enqueues: Match = (sql) => sql.some((x) => x.startsWith(`CALL \`${prefix}enqueue_job`) || x.startsWith(`INSERT INTO \`${prefix}queue_jobs\``));

    it('a single enqueue is one statement (its CALL), no transaction', async () => {
      const q = tr.queue(`o${Date.now()}`);
      const from = client.units.length;
      const one = await q.enqueue({ n: 1 });
      const writes = client.units.slice(from).filter(enqueues);
      // The first enqueue of a queue in a process also rings (inside the CALL): nobody sleeps on it yet.
      expect(writes).toEqual([[expect.stringMatching(new RegExp(`^CALL \`${prefix}enqueue_job(_and_hand)?\`\\(`))]]);
      expect((await jobsOf(q.name)).map((r) => Number(r.id))).toEqual([one.id]);
    });

    it('a batch of 2 to 32 jobs without dedup keys is one statement (its CALL), no transaction; 33 jobs are not', async () => {
      const q = tr.queue(`m${Date.now()}`);
      const from = client.units.length;
      const ten = await q.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ payload: i, priority: i % 3, delay: i === 9 ? 60_000 : 0 })));
      const writes = client.units.slice(from).filter(enqueues);
      expect(writes).toEqual([[expect.stringMatching(new RegExp(`^CALL \`${prefix}enqueue_jobs(_and_ring)?\`\\(`))]]);
      const more = client.units.length;
      const big = await q.enqueueMany(Array.from({ length: 33 }, (_, i) => ({ payload: i })));
      expect(
        client.units
          .slice(more)
          .filter(enqueues)
          .flat()
          .some((x) => x.startsWith('CALL')),
      ).toBe(false);
      expect((await jobsOf(q.name)).map((r) => Number(r.id))).toEqual([...ten, ...big].map((r) => r.id));
      expect((await jobsOf(q.name)).map((r) => Number(r.phase)).slice(8, 10)).toEqual([0, 1]);
    });

    /**
     * A sleeper as another process's doorbell keeps one (the guard row, an uncommitted registration,
     * with `token` a ring may lease a job to for 30 s), asleep on `queue` for 20 s; resolves once it
     * sleeps, with how long its sleep lasted (`slept`).
     */
    async function sleeper(conn: mysql.Connection, queue: string, token = 0): Promise<{ slept: Promise<number> }> {
      const sleepers = `\`${prefix}queue_sleepers\``;
      await conn.query(`INSERT IGNORE INTO ${sleepers} (queue, conn) VALUES (?, 0)`, [queue]);
      await conn.query('SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
      await conn.query('BEGIN');
      await conn.query(`INSERT INTO ${sleepers} (queue, conn, token, lease_us) VALUES (?, CONNECTION_ID(), ?, ?)`, [queue, token, token > 0 ? 30_000_000 : 0]);
      const t0 = Date.now();
      // Interrupted: MySQL ends the SLEEP with 1, MariaDB with error 1317.
      const slept = conn.query('SELECT SLEEP(20) AS r').then(
        () => Date.now() - t0,
        () => Date.now() - t0,
      );
      await until("the sleeper's SLEEP running", async () => (await runningStatement(srv.probe, target.engine, 'SELECT SLEEP')) === conn.threadId, 10);
      return { slept };
    }

    /** The units of work since `from` that ring or touch the doorbell's table apart from the enqueue's own CALL. */
    const ringUnits = (from: number): string[][] =>
      client.units.slice(from).filter((u) => u.some((x) => x.includes('queue_sleepers') && !/_and_hand`/.test(x)));

    it('an enqueue rings a sleeper of another process inside its own CALL (after its commit): no ring statement, no ring transaction', async () => {
      const name = `r${Date.now()}`;
      const conn = await mysql.createConnection({ uri: target.url });
      try {
        const { slept } = await sleeper(conn, name);
        const from = client.units.length;
        const one = await tr.queue(name).enqueue('x');
        expect(await slept).toBeLessThan(10_000);
        expect(client.units.slice(from).filter(enqueues)).toEqual([[expect.stringMatching(new RegExp(`^CALL \`${prefix}enqueue_job_and_hand\`\\(`))]]);
        expect(ringUnits(from)).toEqual([]);
        expect((await jobsOf(name)).map((r) => Number(r.id))).toEqual([one.id]);
      } finally {
        await conn.end();
      }
    });

    it('a batch enqueue whose CALL reply was lost is retried once, then rings: ten jobs, their ids returned, the sleeper woken', async () => {
      const name = `rl${Date.now()}`;
      const conn = await mysql.createConnection({ uri: target.url });
      try {
        const { slept } = await sleeper(conn, name);
        client.lose(1, 'after', enqueues);
        const ten = await tr.queue(name).enqueueMany(Array.from({ length: 10 }, (_, i) => ({ payload: i })));
        expect(client.lostStatements.at(-1)![0]).toMatch(new RegExp(`^CALL \`${prefix}enqueue_jobs\``));
        expect(await slept).toBeLessThan(10_000);
        expect((await jobsOf(name)).map((r) => Number(r.id))).toEqual(ten.map((e) => e.id));
      } finally {
        await conn.end();
      }
    });

    it('an enqueue whose CALL handed its job to a sleeper and whose reply was lost is retried once: one job, leased to the sleeper once (attempt 1), its id returned', async () => {
      const name = `rh${Date.now()}`;
      const conn = await mysql.createConnection({ uri: target.url });
      try {
        const { slept } = await sleeper(conn, name, 424242);
        client.lose(1, 'after', enqueues);
        const one = await tr.queue(name).enqueue('x');
        expect(client.lostStatements.at(-1)![0]).toMatch(new RegExp(`^CALL \`${prefix}enqueue_job_and_hand\``));
        expect(await slept).toBeLessThan(10_000);
        const jobs = await jobsOf(name);
        expect(jobs.map((r) => [Number(r.id), Number(r.phase), Number(r.attempt), Number(r.token)])).toEqual([[one.id, 2, 1, 424242]]);
        // Leased for the sleeper's 30 s on the database clock, from the first run's ring.
        const [lease] = await rows<{ left_us: number }>(
          `SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), due_at) AS left_us FROM \`${prefix}queue_jobs\` WHERE id = ?`,
          [one.id],
        );
        expect(Number(lease!.left_us)).toBeGreaterThan(20_000_000);
        expect(Number(lease!.left_us)).toBeLessThanOrEqual(30_000_000);
      } finally {
        await conn.end();
      }
    });

    it('in a session that logs statements (binlog_format STATEMENT) the hand-off procedure writes nothing at READ UNCOMMITTED: it enqueues the job ready, rings nobody and answers error 1665', async () => {
      const name = `bs${Date.now()}`;
      const conn = await mysql.createConnection({ uri: target.url });
      try {
        await conn.query(`INSERT IGNORE INTO \`${prefix}queue_sleepers\` (queue, conn) VALUES (?, 0)`, [name]);
        await conn.query("SET SESSION binlog_format = 'STATEMENT'");
        const [res] = await conn.query(`CALL \`${prefix}enqueue_job_and_hand\`(?, '', 0, 0, 0, NULL, 0, 3, 1, '1', NULL, ?, 1)`, [name, randomBytes(16)]);
        const row = (res as { id: unknown; found: unknown; ring_errno: unknown; handed: unknown }[][])[0]![0]!;
        expect([row.found, Number(row.ring_errno), Number(row.handed)]).toEqual([null, 1665, 0]);
        expect((await jobsOf(name)).map((r) => [Number(r.id), Number(r.phase), Number(r.attempt)])).toEqual([[Number(row.id), 0, 0]]);
        // Not counted on the guard row either: the ring's transaction never began.
        expect(
          (await rows<{ rings: unknown }>(`SELECT rings FROM \`${prefix}queue_sleepers\` WHERE queue = ? AND conn = 0`, [name])).map((r) => Number(r.rings)),
        ).toEqual([0]);
      } finally {
        await conn.end();
      }
    });

    it("a ring inside an enqueue's CALL that the server refuses (KILL of another user's connection) leaves the enqueue done once, and that process rings no more for a while", async () => {
      const name = `rk${Date.now()}`;
      const user = `trk${process.pid.toString(36)}${Date.now().toString(36)}`.slice(0, 32);
      const db = new URL(target.url).pathname.slice(1);
      await srv.probe.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'pw'`);
      await srv.probe.query(`GRANT SELECT, INSERT, UPDATE, DELETE, EXECUTE ON \`${db}\`.* TO '${user}'@'%'`);
      const url = new URL(target.url);
      [url.username, url.password] = [user, 'pw'];
      const weakPool = mysql.createPool({ uri: url.toString(), connectionLimit: 2 });
      const weak = lossy(mysql2Client(weakPool));
      const conn = await mysql.createConnection({ uri: target.url });
      try {
        const wtr = await createTaskrow<Mysql2Connection>({ client: weak, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
        const { slept } = await sleeper(conn, name);
        const first = await wtr.queue(name).enqueue(1);
        const second = await wtr.queue(name).enqueue(2);
        const calls = weak.units.filter(enqueues).map((u) => u[0]!.slice(0, u[0]!.indexOf('(')));
        expect(calls).toEqual([`CALL \`${prefix}enqueue_job_and_hand\``, `CALL \`${prefix}enqueue_job\``]);
        expect((await jobsOf(name)).map((r) => Number(r.id))).toEqual([first.id, second.id]);
        // Not interrupted: the KILL was refused.
        expect(await runningStatement(srv.probe, target.engine, 'SELECT SLEEP')).toBe(conn.threadId);
        await srv.probe.query(`KILL QUERY ${conn.threadId}`);
        await slept;
      } finally {
        await conn.end();
        await weakPool.end();
        await srv.probe.query(`DROP USER '${user}'@'%'`);
      }
    });

    it('enqueue and enqueueMany whose commit reply was lost insert each job once and return its id', async () => {
      const q = tr.queue(`e${Date.now()}`);
      client.lose(1, 'after', enqueues);
      const one = await q.enqueue({ n: 0 });
      expect(client.lostStatements.at(-1)![0]).toMatch(/^CALL /);
      client.lose(1, 'after', enqueues);
      const small = await q.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ payload: { n: i + 1 } })));
      expect(client.lostStatements.at(-1)![0]).toMatch(new RegExp(`^CALL \`${prefix}enqueue_jobs\``));
      client.lose(1, 'after', enqueues);
      const many = await q.enqueueMany(Array.from({ length: 50 }, (_, i) => ({ payload: { n: i + 11 } })));
      expect(client.lost).toBeGreaterThanOrEqual(3);
      const stored = await jobsOf(q.name);
      expect(stored.map((r) => Number(r.id))).toEqual([one.id, ...small.map((m) => m.id), ...many.map((m) => m.id)]);
    });

    it('an enqueue whose connection was lost before COMMIT (or before its CALL reached the server) is inserted by the retry, once', async () => {
      const q = tr.queue(`b${Date.now()}`);
      client.lose(1, 'before', enqueues);
      const one = await q.enqueue('x');
      expect(client.lostStatements.at(-1)![0]).toMatch(/^CALL /);
      client.lose(1, 'before', enqueues);
      const [two] = await q.enqueueMany([{ payload: 'y' }, { payload: 'z', dedupKey: 'z' }]);
      expect(client.lostStatements.at(-1)!.some((x) => x.startsWith('INSERT'))).toBe(true);
      expect((await jobsOf(q.name)).map((r) => Number(r.id)).slice(0, 2)).toEqual([one.id, two!.id]);
      expect(await jobsOf(q.name)).toHaveLength(3);
    });

    it('an enqueue whose CALL leased its jobs to a napping worker of this process and lost its reply (after its commit, or before it reached the server) hands them once: each run once, attempt 1, by no claim, none left', async () => {
      const leasedCall = new RegExp(`^CALL \`${prefix}enqueue_jobs_leased\``);
      for (const when of ['after', 'before'] as const) {
        const q = tr.queue<number>(`lh${when}${Date.now()}`);
        const ran: number[] = [];
        const attempts = new Set<number>();
        const w = q.work(async (job) => void (ran.push(job.payload), attempts.add(job.attempt)), { concurrency: 10, pollInterval: 30_000 });
        try {
          await once(w, 'idle'); // it naps from here on
          const from = client.units.length;
          client.lose(1, when, (sql) => sql.some((x) => leasedCall.test(x)));
          const out = await q.enqueueMany(Array.from({ length: 5 }, (_, i) => ({ payload: i })));
          expect(client.lostStatements.at(-1)![0]).toMatch(leasedCall);
          await until('5 runs and no job left', async () => ran.length >= 5 && (await jobsOf(q.name)).length === 0, 10);
          expect([...ran].sort()).toEqual([0, 1, 2, 3, 4]);
          expect([...attempts]).toEqual([1]);
          expect(w.counts).toEqual({ completed: 5, failed: 0, lost: 0 });
          expect(client.units.slice(from).filter((u) => u.some((x) => x.includes('claim_jobs') || x.includes('SKIP LOCKED')))).toEqual([]);
          expect(out).toHaveLength(5);
        } finally {
          await w.stop();
        }
      }
    });

    it("an enqueue CALL meeting a run of its receipt still in flight waits for it: returns that run's id when it commits, inserts its own when it rolls back", async () => {
      const queue = `w${Date.now()}`;
      const caller = await mysql.createConnection({ uri: target.url });
      const call = (receipt: Buffer) =>
        caller
          .query(`CALL \`${prefix}enqueue_job\`(?, '', 0, 0, 0, NULL, 0, 3, 7, '"p"', NULL, ?)`, [queue, receipt])
          .then(([r]) => Number((r as Array<Array<{ id: unknown }>>)[0]![0]!.id));
      const holder = await srv.pool.getConnection();
      try {
        for (const outcome of ['COMMIT', 'ROLLBACK'] as const) {
          const receipt = randomBytes(16);
          // The run in flight: its receipt written, not yet committed, recording a job id of its own.
          await holder.query('BEGIN');
          await holder.query(`INSERT INTO \`${prefix}receipts\` (token, made_at, result) VALUES (?, UTC_TIMESTAMP(6), '424242')`, [receipt]);
          const retry = call(receipt);
          await until(
            "the caller's receipt INSERT waiting",
            async () => (await runningStatement(srv.probe, target.engine, `INSERT INTO \`${prefix}receipts\``)) === caller.threadId,
            10,
          );
          await holder.query(outcome);
          const id = await retry;
          const stored = (await jobsOf(queue)).map((r) => Number(r.id));
          if (outcome === 'COMMIT') {
            expect(id).toBe(424242); // the committed run's answer; its own insert rolled back
            expect(stored).toEqual([]);
          } else {
            expect(stored).toEqual([id]);
          }
          expect(await call(receipt)).toBe(outcome === 'COMMIT' ? 424242 : id); // and again: the same answer, nothing inserted
          expect(await jobsOf(queue)).toHaveLength(outcome === 'COMMIT' ? 0 : 1);
          await srv.probe.query(`DELETE FROM \`${prefix}queue_jobs\` WHERE queue = ?`, [queue]);
        }
      } finally {
        holder.release();
        await caller.end();
      }
    });

    it('an enqueue on a schema without the procedure (older than version 17) enqueues in a transaction, once, and keeps doing so', async () => {
      const old = `${prefix}o_`;
      const plain = await createTaskrow<Mysql2Connection>({
        client: mysql2Client(srv.pool),
        joinTransaction: (tx) => mysql2Client(tx, true),
        options: { prefix: old },
      });
      await plain.migrate();
      await srv.probe.query(`DROP PROCEDURE \`${old}enqueue_job\``);
      const q = plain.queue('q');
      const ids = [(await q.enqueue(1)).id, (await q.enqueue(2)).id];
      const stored = await rows<{ id: number }>(`SELECT id FROM \`${old}queue_jobs\` ORDER BY id`);
      expect(stored.map((r) => Number(r.id))).toEqual(ids);
      expect(await rows(`SELECT result FROM \`${old}receipts\``)).toHaveLength(2);
      await dropPrefix(srv.probe, old);
    });

    it("an enqueue whose CALL is killed inside the procedure's transaction leaves no job, and the connection's next user commits only its own", async () => {
      // MySQL runs no handler for KILL QUERY: the procedure's transaction (its job inserted) stays
      // open on the connection, and the next BEGIN there would commit it.
      for (const over of ['pool', 'connection'] as const) {
        const queue = `k${over}${Date.now()}`;
        const driver = over === 'pool' ? mysql.createPool({ uri: target.url, connectionLimit: 1 }) : await mysql.createConnection({ uri: target.url });
        const [[{ id: caller }]] = (await driver.query('SELECT CONNECTION_ID() AS id')) as unknown as [[{ id: number }]];
        const one = await createTaskrow<Mysql2Connection>({
          client: mysql2Client(driver),
          joinTransaction: (tx) => mysql2Client(tx, true),
          options: { prefix },
        });
        const holder = await mysql.createConnection({ uri: target.url });
        try {
          // The receipt INSERT, after the job's, waits for the holder's next-key locks over the whole
          // receipts index (a locking read at REPEATABLE READ): the CALL is inside its transaction.
          await holder.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
          await holder.query('BEGIN');
          await holder.query(`SELECT token FROM \`${prefix}receipts\` FOR UPDATE`);
          const killed = one
            .queue(queue)
            .enqueue('killed')
            .then(
              () => 'enqueued',
              (err: unknown) => err,
            );
          await until(
            "the caller's receipt INSERT waiting",
            async () => (await runningStatement(srv.probe, target.engine, `INSERT INTO \`${prefix}receipts\``)) === caller,
            10,
          );
          await srv.probe.query(`KILL QUERY ${caller}`);
          expect(await killed).toMatchObject({ code: 'DATABASE_ERROR', errno: 1317 });
          await holder.query('ROLLBACK');
          const next = await one.queue(queue).enqueue('next');
          expect((await jobsOf(queue)).map((r) => Number(r.id))).toEqual([next.id]);
        } finally {
          await holder.end();
          await driver.end();
        }
      }
    });

    it('a schedule tick whose commit reply was lost, or whose connection was lost before COMMIT, enqueues its job once', async () => {
      const s = tr.schedules();
      for (const when of ['after', 'before'] as const) {
        const [name, queue] = [`s${when}${Date.now()}`, `t${when}${Date.now()}`];
        await s.upsert(name, { queue, every: 60_000 });
        const next = async (): Promise<number> =>
          Number(
            (
              await rows<{ n: unknown }>(`SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', next_at) AS n FROM \`${prefix}queue_schedules\` WHERE name = ?`, [
                name,
              ])
            )[0]!.n,
          );
        const first = await next();
        await srv.probe.query(`UPDATE \`${prefix}queue_schedules\` SET next_at = next_at - INTERVAL 60 SECOND WHERE name = ?`, [name]);
        const lostBefore = client.lost;
        client.lose(1, when);
        // After a lost reply the retry finds the tick taken (its own lost run committed it): it reports 0.
        expect(await s.runDue()).toBe(when === 'after' ? 0 : 1);
        expect(client.lost).toBe(lostBefore + 1);
        expect(await jobsOf(queue)).toHaveLength(1);
        expect(await next()).toBe(first);
        await s.remove(name);
      }
    });

    /** A claim's CALL (schema version 20). */
    const claimCall: Match = (sql) => sql.length === 1 && sql[0]!.startsWith(`CALL \`${prefix}claim_jobs\``);

    it('a claim is one statement (its CALL), no transaction; a claim of one group is a transaction', async () => {
      const q = tr.queue(`o${Date.now()}`);
      await q.enqueueMany(Array.from({ length: 6 }, (_, i) => ({ payload: i, group: i % 2 === 0 ? 'even' : undefined })));
      const from = client.units.length;
      expect(await q.claim({ limit: 2, lease: 60_000 })).toHaveLength(2);
      expect(client.units.slice(from).filter((u) => u.some((x) => x.includes('claim_jobs') || x.includes('SKIP LOCKED')))).toEqual([
        [expect.stringMatching(new RegExp(`^CALL \`${prefix}claim_jobs\`\\(`))],
      ]);
      const grouped = client.units.length;
      expect(await q.claim({ limit: 2, lease: 60_000, group: 'even' })).toHaveLength(2);
      const units = client.units.slice(grouped).filter((u) => u.some((x) => x.includes('claim_jobs') || x.includes('SKIP LOCKED')));
      expect(units).toHaveLength(1);
      expect(units[0]!.some((x) => x.includes('FOR UPDATE SKIP LOCKED'))).toBe(true);
    });

    it('a claim whose reply was lost returns the jobs that run took: same tokens, attempt counted once (its CALL, and a claim of one group in a transaction)', async () => {
      for (const group of [undefined, 'g'] as const) {
        const q = tr.queue(`c${group ?? ''}${Date.now()}`);
        await q.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ payload: i, group })));
        const lostBefore = client.lostStatements.length;
        if (group === undefined) client.lose(1, 'after', claimCall);
        else client.lose(1);
        const jobs = await q.claim({ limit: 4, lease: 60_000, group });
        expect(jobs).toHaveLength(4);
        const lost = client.lostStatements.slice(lostBefore);
        expect(lost).toHaveLength(1);
        expect(claimCall(lost[0]!)).toBe(group === undefined);
        const stored = await jobsOf(q.name);
        const running = stored.filter((r) => Number(r.phase) === 2);
        expect(running.map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual(jobs.map((j) => j.id).sort((a, b) => a - b));
        for (const j of jobs) {
          const row = running.find((r) => Number(r.id) === j.id)!;
          expect([Number(row.token), Number(row.attempt), j.attempt]).toEqual([j.token, 1, 1]);
        }
      }
    });

    /** Units of a worker alone on a new queue draining 300 jobs, 5 at a time, its handler answering `result`. */
    const aloneUnits = async (name: string, options: { keepFinishedFor?: number }, result: (i: unknown) => unknown): Promise<string[][]> => {
      const q = tr.queue(`${name}${Date.now()}`, options);
      await q.enqueueMany(Array.from({ length: 300 }, (_, i) => ({ payload: i })));
      const from = client.units.length;
      const worker = q.work((job) => result(job.payload), { concurrency: 5, batchSize: 5, lease: 60_000, pollInterval: 50 });
      await until('300 completions', () => worker.counts.completed >= 300, 20).finally(() => worker.stop());
      expect(worker.counts.completed).toBe(300);
      return client.units.slice(from);
    };
    /** A transaction holding a completion (its delete, or its update when finished jobs are kept) and a claim's locking read. */
    const together = (u: readonly string[]): boolean =>
      u.some((x) => x.startsWith('DELETE') || x.includes('SET `dedup_k` = NULL, `finished_at`')) && u.some((x) => x.includes('SKIP LOCKED'));

    it('a worker alone on its queue claims by CALL until ten found the claim lock free, then with its completions in one transaction, whether it keeps finished jobs or not', async () => {
      for (const options of [{}, { keepFinishedFor: 60_000 }]) {
        const units = await aloneUnits('alone', options, (i) => ({ i }));
        expect(units.filter(claimCall).length).toBeGreaterThanOrEqual(10);
        expect(units.filter(together).length).toBeGreaterThan(0);
      }
    }, 60_000);

    it('a claim whose CALL never reached the server claims in a transaction, once', async () => {
      const q = tr.queue(`b${Date.now()}`);
      await q.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ payload: i })));
      const lostBefore = client.lostStatements.length;
      client.lose(1, 'before', claimCall);
      const jobs = await q.claim({ limit: 4, lease: 60_000 });
      expect(client.lostStatements.slice(lostBefore)).toHaveLength(1);
      expect(jobs).toHaveLength(4);
      const running = (await jobsOf(q.name)).filter((r) => Number(r.phase) === 2);
      expect(running.map((r) => [Number(r.id), Number(r.attempt)])).toEqual(jobs.map((j) => [j.id, 1]).sort((a, b) => a[0]! - b[0]!));
    });

    /** A completion's transaction: its fenced DELETE. */
    const completion: Match = (sql) => sql.some((x) => x.startsWith('DELETE'));

    it('a complete() whose reply was lost, after its commit or before it reached the server, resolves with every job deleted', async () => {
      for (const when of ['after', 'before'] as const) {
        const q = tr.queue(`x${when}${Date.now()}`);
        await q.enqueueMany(Array.from({ length: 4 }, (_, i) => ({ payload: i })));
        const jobs = await q.claim({ limit: 4, lease: 60_000 });
        const lostBefore = client.lostStatements.length;
        client.lose(1, when, completion);
        await q.complete(jobs);
        expect(client.lostStatements.slice(lostBefore).map(completion)).toEqual([true]);
        expect(await jobsOf(q.name)).toEqual([]);
      }
    });

    it('a complete() of a batch with a job no longer held deletes nothing at first, then completes the held jobs and names the other', async () => {
      const q = tr.queue(`u${Date.now()}`);
      await q.enqueueMany(Array.from({ length: 3 }, (_, i) => ({ payload: i })));
      const jobs = await q.claim({ limit: 3, lease: 60_000 });
      const taken = jobs[1]!;
      // Another claim holds that job now: its token moved on.
      await srv.probe.query(`UPDATE \`${prefix}queue_jobs\` SET token = token + 1 WHERE id = ?`, [taken.id]);
      const err = (await q.complete(jobs).catch((e: unknown) => e)) as { code?: string; lost?: number[]; applied?: number[] };
      expect([err.code, err.lost, [...(err.applied ?? [])].sort((a, b) => a - b)]).toEqual([
        'LEASE_LOST',
        [taken.id],
        [jobs[0]!.id, jobs[2]!.id].sort((a, b) => a - b),
      ]);
      expect((await jobsOf(q.name)).map((r) => [r.id, r.phase, r.attempt, r.token].map(Number))).toEqual([[taken.id, 2, 1, taken.token + 1]]);
    });

    it('complete, fail and release whose reply was lost report what was applied, not LEASE_LOST', async () => {
      const q = tr.queue(`a${Date.now()}`);
      await q.enqueueMany(Array.from({ length: 6 }, (_, i) => ({ payload: i })));
      const jobs = await q.claim({ limit: 6, lease: 60_000 });
      client.lose(1, 'after', completion);
      await q.complete(jobs.slice(0, 3));
      client.lose(1);
      expect((await q.fail(jobs[3]!, new Error('boom'))).state).toBe('delayed');
      client.lose(1);
      await q.release(jobs.slice(4));
      const stored = await jobsOf(q.name);
      expect(stored.map((r) => [Number(r.id), Number(r.phase)])).toEqual([
        [jobs[3]!.id, 1],
        [jobs[4]!.id, 0],
        [jobs[5]!.id, 0],
      ]);
    });

    /**
     * A worker drains `jobs` jobs of a new queue while the replies of the first `count` statements
     * (or transactions) that `match` are lost `when`; every job MUST run once, by the ledger kept
     * here, none left behind, none counted lost. Resolves to the lost statements.
     */
    const drainLosing = async (name: string, jobs: number, when: 'after' | 'before', match: Match, count = 3): Promise<string[][]> => {
      const q = tr.queue(`${name}${when}${Date.now()}`);
      const ids = new Set((await q.enqueueMany(Array.from({ length: jobs }, (_, i) => ({ payload: i })))).map((e) => e.id));
      const ran: number[] = []; // the ledger, outside the database
      const lostBefore = client.lostStatements.length;
      client.lose(count, when, match);
      const worker = q.work((job) => void ran.push(job.id), { concurrency: 10, batchSize: 10, lease: 60_000, pollInterval: 50 });
      await until(`${ids.size} completions`, () => worker.counts.completed >= ids.size, 10).finally(() => worker.stop());
      expect([...ran].sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
      expect(worker.counts).toEqual({ completed: ids.size, failed: 0, lost: 0 });
      expect(await jobsOf(q.name)).toEqual([]);
      return client.lostStatements.slice(lostBefore);
    };

    it('a worker whose complete-and-claim replies were lost runs every job once and leaves none leased to nobody', async () => {
      for (const when of ['after', 'before'] as const) {
        // The completions of batches (each followed by a claim's CALL, or sharing a transaction with a claim), and the claims' CALLs.
        const lost = await drainLosing('w', 40, when, (tx) => claimCall(tx) || completion(tx));
        expect(lost).toHaveLength(3);
      }
    });

    it('a worker alone on its queue whose completion-and-claim transactions lost their replies, after commit and before the server, runs every job once and leaves none leased to nobody', async () => {
      for (const when of ['after', 'before'] as const) {
        const lost = await drainLosing('together', 400, when, together);
        expect(lost.map(together)).toEqual([true, true, true]);
      }
    }, 60_000);

    it('remove() and promote() whose reply was lost, after the commit or before the server, leave each job removed or due once and touch no other', async () => {
      for (const when of ['after', 'before'] as const) {
        const q = tr.queue(`rp${when}${Date.now()}`);
        const [a, b, c] = await q.enqueueMany([{ payload: 1 }, { payload: 2 }, { payload: 3, delay: 3_600_000 }]);
        const lostBefore = client.lostStatements.length;
        client.lose(1, when, (sql) => sql.some((x) => x.startsWith('DELETE')));
        expect([0, 2]).toContain(await q.remove([a!.id, b!.id])); // a retry after a commit counts only its own run
        client.lose(1, when, (sql) => sql.some((x) => x.startsWith('UPDATE') && x.includes('`run_at` = UTC_TIMESTAMP(6)')));
        expect([0, 1]).toContain(await q.promote(c!.id));
        expect(client.lostStatements.length - lostBefore).toBe(2);
        expect((await jobsOf(q.name)).map((r) => [Number(r.id), Number(r.phase), Number(r.attempt)])).toEqual([[c!.id, 0, 0]]);
      }
    });

    it('a Loop get whose reply was lost returns the ids that run locked, and locks no others', async () => {
      const loop = await tr.createLoop(`l${Date.now().toString(36)}`);
      await loop.add(Array.from({ length: 20 }, (_, i) => i + 1));
      client.lose(1);
      const ids = await loop.get(5);
      expect(ids).toHaveLength(5);
      const locked = await rows<{ id: number }>(`SELECT id FROM \`${loop.table}\` WHERE lock_until IS NOT NULL ORDER BY id`);
      expect(locked.map((r) => Number(r.id))).toEqual([...ids].map(Number).sort((a, b) => a - b));
    });

    it('a Dones namespace whose row INSERT lost its reply keeps the generation it made: nothing retired, its marks survive the purge', async () => {
      const ns = `dn${Date.now()}`;
      const lostBefore = client.lost;
      client.lose(1, 'after', (sql) => sql[0]!.startsWith(`INSERT IGNORE INTO \`${prefix}dones_ns\``));
      expect(await tr.dones(ns).mark(['a', 'b'])).toBe(2);
      expect(client.lost - lostBefore).toBe(1);
      client.lose(0);
      const gens = await rows<{ gen: unknown; current: unknown; retired: unknown }>(
        `SELECT g.gen, g.gen = n.gen AS current, g.retired_at IS NOT NULL AS retired FROM \`${prefix}dones_gen\` g JOIN \`${prefix}dones_ns\` n ON n.name = g.ns WHERE g.ns = ?`,
        [ns],
      );
      expect(gens.map((g) => [Number(g.current), Number(g.retired)])).toEqual([[1, 0]]);
      await tr.purgeCleared();
      expect(await tr.dones(ns).areDone(['a', 'b'])).toEqual(['a', 'b']);
    });

    it('a Resources acquire whose reply was lost holds its own locks', async () => {
      const res = tr.resources({ releaseOnExit: false });
      const key = `out.${Date.now()}`;
      client.lose(1);
      const job = await res.acquire('writer', { outputs: [key], lease: 60_000 });
      expect(job.held).toBe(true);
      const locks = await rows<{ holder: Buffer }>(`SELECT holder FROM \`${prefix}resource_locks\``);
      expect(locks.map((l) => Buffer.from(l.holder).toString('hex'))).toContain(job.id);
      await job.release();
    });
  });
}
