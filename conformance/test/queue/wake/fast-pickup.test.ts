import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createTaskrow, type QueueWorker, type SqlClient, type Taskrow } from '@taskrow/core';
import { mysql2Client, type Mysql2Connection } from '@taskrow/mysql2';
import { counting } from '../../../src/counting.js';
import { openMigratedPool, until, useMigratedPool } from '../../../src/setup.js';
import { label, targets } from '../../../src/targets.js';

/** A claim as the server receives it: its locking read in a transaction, or its CALL (schema version 20). */
const CLAIMS = /ORDER BY `ready_priority`.*SKIP LOCKED|^CALL `[^`]*claim_jobs`/s;

/** An idle worker's poll (`claimable`: one statement, its first parameter the queue). */
const POLL = /\) AS go$/;

/** Resolves after `ms` on the local clock: an observation window, not a wait for the database. */
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const wallNow = (): number => performance.timeOrigin + performance.now();

/**
 * Runs enqueue-process.mjs: another process enqueues `count` jobs (payload 0, 1, ...) into `queue`,
 * `gapMs` apart, through a pool of `poolSize` connections; resolves to the wall-clock time each
 * enqueue returned, by payload (`took`: how long each enqueue took, ms). With `gate`, the process
 * connects at once and enqueues only once `gate` resolved.
 */
function enqueueFromAnotherProcess(
  url: string,
  prefix: string,
  queue: string,
  count: number,
  gapMs: number,
  took?: Map<number, number>,
  poolSize = 2,
  keyed = false,
  gate?: Promise<void>,
): Promise<Map<number, number>> {
  const script = fileURLToPath(new URL('./enqueue-process.mjs', import.meta.url));
  const env = {
    ENQ_URL: url,
    ENQ_PREFIX: prefix,
    ENQ_QUEUE: queue,
    ENQ_COUNT: String(count),
    ENQ_GAP_MS: String(gapMs),
    ENQ_POOL: String(poolSize),
    ENQ_KEYED: keyed ? '1' : '',
    ENQ_GATE: gate === undefined ? '' : '1',
  };
  const c = fork(script, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const at = new Map<number, number>();
  return new Promise((resolve, reject) => {
    c.on('message', (m: unknown) => {
      if (m === 'ready') return void gate?.then(() => c.send('go'));
      if (m === 'done') return resolve(at);
      const { i, at: when, took: ms } = m as { i: number; at: number; took: number };
      at.set(i, when);
      took?.set(i, ms);
    });
    c.on('error', reject);
    c.on('exit', (code) => (code === 0 ? resolve(at) : reject(new Error(`the enqueue process exited with ${code}`))));
  });
}

/**
 * A ring taken apart on `ringer`: holds the guard row of `queue` and has read a registration
 * (READ UNCOMMITTED), and sends no KILL. Tries for 10 s; resolves to the sleeping connection's id.
 */
async function ringApart(ringer: mysql.Connection, sleepers: string, queue: string): Promise<number> {
  await ringer.query('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
  let id = 0;
  await until(
    `a sleeper of ${queue} registered, its guard row held`,
    async () => {
      await ringer.query('BEGIN');
      await ringer.query(`SELECT conn FROM ${sleepers} WHERE queue = ? AND conn = 0 FOR UPDATE`, [queue]);
      const [rows] = await ringer.query(`SELECT conn FROM ${sleepers} WHERE queue = ? AND conn > 0`, [queue]);
      id = Number((rows as { conn: unknown }[])[0]?.conn ?? 0);
      if (id === 0) await ringer.query('COMMIT');
      return id > 0;
    },
    10,
  );
  return id;
}

/**
 * Waits (10 s at most) until a sleeper of `queue` is registered with a token a ring may lease a
 * job to, read uncommitted through `via`; resolves to that token.
 */
async function handRegistration(via: mysql.Connection, sleepers: string, queue: string): Promise<number> {
  await via.query('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
  let token = 0;
  await until(
    `a sleeper of ${queue} registered with a token`,
    async () => {
      const [rows] = await via.query(`SELECT token FROM ${sleepers} WHERE queue = ? AND conn > 0 AND token > 0`, [queue]);
      token = Number((rows as { token: unknown }[])[0]?.token ?? 0);
      return token > 0;
    },
    10,
  );
  return token;
}

/**
 * The statement connection `id` runs now, read through `via`. MySQL 9 converts every connection's
 * statement text to utf8mb3 to fill the process list and fails the read (error 3854) while another
 * test file's statement carries a 4-byte character: read again then.
 */
async function statementOf(via: mysql.Connection | mysql.PoolConnection, id: number): Promise<string | null> {
  let info: string | null = null;
  await until(
    `a read of connection ${id}'s statement`,
    async () => {
      try {
        const [rows] = await via.query('SELECT INFO AS info FROM information_schema.PROCESSLIST WHERE ID = ?', [id]);
        info = (rows as { info: string | null }[])[0]?.info ?? null;
        return true;
      } catch (err) {
        if ((err as { errno?: number }).errno !== 3854) throw err;
        return false;
      }
    },
    5,
  );
  return info;
}

/** Milliseconds from `since` to `picked()` (a `performance.now()` time, 0 until a handler ran), waited for `ms` at most. */
async function pickedAfter(picked: () => number, since: number, ms: number): Promise<number> {
  await until('a handler ran', () => picked() > 0, ms / 1000);
  return picked() - since;
}

/**
 * taskrow over `pool` as `taskrow(pool, { prefix })` makes it, whose workers' idle polls are
 * counted per queue (`polls(queue)`): a worker's polls tell where it is in its waits (see below).
 */
async function pollCounting(pool: mysql.Pool, prefix: string): Promise<{ tr: Taskrow<Mysql2Connection>; polls: (queue: string) => number }> {
  const inner = mysql2Client(pool);
  const counts = new Map<string, number>();
  const client: SqlClient = {
    ...inner,
    query: (sql, params, options) => {
      if (POLL.test(sql)) counts.set(String(params?.[0]), (counts.get(String(params?.[0])) ?? 0) + 1);
      return inner.query(sql, params, options);
    },
  };
  const tr = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
  return { tr, polls: (queue) => counts.get(queue) ?? 0 };
}

/**
 * Resolves once the idle workers counted by `polls` sent their `n`th poll since they found the
 * queue empty. Their waits double from 10 ms: after the 8th poll (about 2.55 s in) a worker waits
 * to about 5.1 s without a statement, after the 9th to about 10.2 s (with `pollInterval` 30).
 */
async function inWait(polls: () => number, n: 8 | 9): Promise<void> {
  await until(`the idle worker's poll ${n}`, () => polls() >= n, 30);
}

/**
 * Statements counted over a window of 20 polls once the waits of workers polling every 0.05 s have
 * grown to that (their 4th poll, `polled()`), and how many 50 ms intervals the window really had:
 * the window ends at an event and is measured, not assumed.
 */
async function pollWindow(statements: () => number, polled: () => number): Promise<{ polls: number; intervals: number }> {
  await until('the waits grown to pollInterval', () => polled() >= 4, 10);
  const before = statements();
  const w0 = performance.now();
  await until('20 polls', () => statements() - before >= 20, 10);
  return { polls: statements() - before, intervals: (performance.now() - w0) / 50 };
}

// An idle worker waits 10 ms, 20 ms, 40 ms, ... (doubling up to pollInterval) between claims, so
// 3 s after it found the queue empty it is inside the wait that runs from about 2.55 s to 5.1 s.
// Without a wake-up an enqueue made then would wait about 2 s for the next claim.
for (const target of targets()) {
  describe(`${label(target)} · mysql2 · fast pickup`, () => {
    const prefix = `fp${process.pid.toString(36)}_`;
    const db = useMigratedPool(target, { prefix });

    /** An idle doorbell worker of `name`; `picked()` is when its handler first ran (`performance.now()`, 0 before). */
    const pickingWorker = async (name: string): Promise<{ w: QueueWorker; picked: () => number; polls: () => number }> => {
      let at = 0;
      const watched = await pollCounting(db.pool, prefix);
      const w = watched.tr.queue<number>(name).work(async () => void (at ||= performance.now()), { pollInterval: 30_000, doorbell: true });
      return { w, picked: () => at, polls: () => watched.polls(name) };
    };

    /** Enqueues one job into `name` inside an application transaction on `app`: nothing in this process rings for it. */
    const enqueueUnrung = async (app: mysql.PoolConnection, name: string): Promise<void> => {
      await app.beginTransaction();
      await db.tr.in(app).queue(name).enqueue(1);
      await app.commit();
    };

    it('an enqueue wakes an idle worker of the same process at once, not at its next poll', async () => {
      const watched = await pollCounting(db.pool, prefix);
      const q = watched.tr.queue<number>(`w${Date.now()}`);
      const started = new Map<number, number>();
      const w = q.work(async (job) => void started.set(job.payload, performance.now()), { pollInterval: 30_000 });
      try {
        await inWait(() => watched.polls(q.name), 8);
        const t0 = performance.now();
        await q.enqueue(1);
        await until('job 1 started', () => started.has(1), 10);
        expect(started.get(1)! - t0).toBeLessThan(1000);
      } finally {
        await w.stop();
      }
    }, 30_000);

    // Workers of one group: a worker of every group would be leased the job by the enqueue itself (local-hand.test.ts), with no claim at all.
    it('an enqueue of one job wakes one of 4 idle workers of the process: one claim, not four', async () => {
      const { client, matching } = counting(mysql2Client(db.pool));
      const counted = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const q = counted.queue<number>(`o${Date.now()}`);
      const started: number[] = [];
      // Two slots each: a claim that finds one job is short, so the worker does not claim again after it.
      const workers = Array.from({ length: 4 }, () =>
        q.work(async (job) => void started.push(job.payload), { pollInterval: 30_000, concurrency: 2, group: 'g' }),
      );
      const claims = (): number => matching(CLAIMS);
      try {
        await inWait(() => matching(POLL), 8); // the workers share their polls: inside their 2.55 s to 5.1 s wait (see above)
        const before = claims();
        await db.tr.queue<number>(q.name).enqueue(1, { group: 'g' });
        await until('a job started', () => started.length > 0, 10);
        expect(started).toEqual([1]);
        // An observation window, the thing under test: a claim of a worker not rung would come in it, and no event tells that none did.
        await pause(200);
        expect(claims() - before).toBe(1);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    }, 30_000);

    it('an idle worker polls with one statement per poll, and still picks up a job another process enqueued', async () => {
      const { client, statements, matching } = counting(mysql2Client(db.pool));
      const counted = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const name = `i${Date.now()}`;
      let picked = 0;
      const w = counted.queue(name).work(async () => void (picked = performance.now()), { pollInterval: 50 });
      try {
        // One poll per pollInterval (jittered) of the window as it really ran.
        const { polls, intervals } = await pollWindow(statements, () => matching(POLL));
        expect(polls).toBeGreaterThanOrEqual(Math.floor(intervals / 3));
        expect(polls).toBeLessThanOrEqual(Math.floor(intervals * 1.25) + 1);
        // Enqueued inside an application transaction: nothing rings in this process, as for another process.
        const conn = await db.pool.getConnection();
        try {
          await conn.beginTransaction();
          await db.tr.in(conn).queue(name).enqueue('x');
          await conn.commit();
        } finally {
          conn.release();
        }
        const t0 = performance.now();
        await until('the job picked up', () => picked > 0, 10);
        expect(picked - t0).toBeLessThan(500);
      } finally {
        await w.stop();
      }
    }, 30_000);

    it("an enqueue made while a worker's claim is on its way but has not read the queue yet is taken by that claim: no ring, no second claim", async () => {
      // The first transaction begun while `held` is set waits there (after BEGIN, before its first statement).
      let held: Promise<void> | undefined;
      let reached: () => void = () => undefined;
      const inner = mysql2Client(db.pool);
      const gate = async (): Promise<void> => {
        const h = held;
        held = undefined;
        if (h !== undefined) reached(), await h;
      };
      // No CALLs (`endsInterrupted` unknown): the claim is a transaction, and the gate holds it before its read.
      const gated: SqlClient = {
        ...inner,
        endsInterrupted: false,
        transaction: (fn, options) => inner.transaction(async (conn) => (await gate(), fn(conn)), options),
      };
      const { client, matching } = counting(gated);
      const counted = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const name = `r${Date.now()}`;
      const started: number[] = [];
      const w = counted.queue<number>(name).work(async (job) => void started.push(job.payload), { pollInterval: 30_000, concurrency: 4 });
      const claims = (): number => matching(CLAIMS);
      try {
        await inWait(() => matching(POLL), 8); // the worker is inside its 2.55 s to 5.1 s wait (see above)
        let open: () => void = () => undefined;
        held = new Promise<void>((r) => (open = r));
        const atGate = new Promise<void>((r) => (reached = r));
        const before = claims();
        await db.tr.queue<number>(name).enqueue(1); // rings the napping worker: its claim waits at the gate
        await atGate;
        await counted.queue<number>(name).enqueue(2); // committed through the worker's client before that claim reads
        open();
        await until('both jobs started', () => started.length >= 2, 10);
        expect([...started].sort()).toEqual([1, 2]);
        // An observation window, the thing under test: a second claim would come in it, and no event tells that none did.
        await pause(300);
        expect(claims() - before).toBe(1);
      } finally {
        await w.stop();
      }
    }, 30_000);

    it('4 idle workers of one process poll as one: about one statement per pollInterval, not four', async () => {
      const { client, statements, matching } = counting(mysql2Client(db.pool));
      const counted = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const q = counted.queue(`s${Date.now()}`);
      const workers = Array.from({ length: 4 }, () => q.work(async () => undefined, { pollInterval: 50 }));
      try {
        const { polls, intervals } = await pollWindow(statements, () => matching(POLL));
        expect(polls).toBeGreaterThanOrEqual(Math.floor(intervals / 3));
        expect(polls).toBeLessThanOrEqual(Math.floor(intervals * 1.25) + 2);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    }, 30_000);

    it('a backlog from another process wakes every idle worker of the process, not only the one whose poll found it', async () => {
      const name = `b${Date.now()}`;
      const q = db.tr.queue<number>(name);
      let running = 0;
      let most = 0;
      const ran: number[] = [];
      let release: () => void = () => undefined;
      const allIn = new Promise<void>((r) => (release = r));
      const handler = async (job: { payload: number }): Promise<void> => {
        ran.push(job.payload);
        most = Math.max(most, ++running);
        if (running === 4) release();
        await Promise.race([allIn, pause(3000)]); // all four in, or 3 s: bounds a failure only
        running -= 1;
      };
      // One slot and one job per claim each: a worker that found the backlog takes one job at a time.
      const workers = Array.from({ length: 4 }, () => q.work(handler, { pollInterval: 5000, concurrency: 1, batchSize: 1 }));
      const napping = Promise.all(workers.map((w) => once(w, 'idle')));
      try {
        await napping; // every worker found the queue empty and naps
        // Enqueued inside an application transaction: nothing rings in this process, as for another process.
        const conn = await db.pool.getConnection();
        try {
          await conn.beginTransaction();
          await db.tr
            .in(conn)
            .queue<number>(name)
            .enqueueMany(Array.from({ length: 8 }, (_, i) => ({ payload: i })));
          await conn.commit();
        } finally {
          conn.release();
        }
        await until('8 jobs run', () => ran.length >= 8, 20);
        expect(most).toBe(4);
        expect([...ran].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    }, 30_000);

    it('with doorbell: true, an enqueue in another process wakes an idle worker within milliseconds, not at its next poll; idle, it costs at most 7 statements a second', async () => {
      const { client, statements, matching } = counting(mysql2Client(db.pool));
      const counted = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const name = `d${Date.now()}`;
      const started = new Map<number, number>();
      const w = counted.queue<number>(name).work(async (job) => void started.set(job.payload, wallNow()), { pollInterval: 30_000, doorbell: true });
      try {
        await inWait(() => matching(POLL), 8);
        // Idle: one sleep a second (isolation, BEGIN, register, SLEEP(1), guard, ROLLBACK) and
        // the worker's own polls, fewer than one a second here; counted against the window as it
        // really ran, from its 8th poll (about 2.55 s in) to its 9th (about 5.1 s in).
        const before = statements();
        const w0 = performance.now();
        await inWait(() => matching(POLL), 9);
        expect(statements() - before).toBeLessThanOrEqual(Math.ceil(((performance.now() - w0) / 1000) * 7) + 6);
        // Past 5.1 s the worker is inside its wait that runs to about 10.2 s (see above): polling
        // alone would pick the job up seconds after the enqueue.
        const enqueuedAt = await enqueueFromAnotherProcess(target.url, prefix, name, 1, 0);
        await until('job 0 started', () => started.has(0), 10);
        expect(started.get(0)! - enqueuedAt.get(0)!).toBeLessThan(500);
      } finally {
        await w.stop();
      }
    }, 40_000);

    it("a producer process's ring never holds up its enqueue: through a pool of one connection, with doorbell workers asleep elsewhere, each enqueue takes a few milliseconds and wakes them", async () => {
      const name = `p${Date.now()}`;
      const started = new Map<number, number>();
      const w = db.tr.queue<number>(name).work(async (job) => void started.set(job.payload, wallNow()), { pollInterval: 30_000, doorbell: true });
      const idle = once(w, 'idle');
      try {
        await idle;
        // The producer has no worker of the queue, so it rings alongside its enqueues (with dedup
        // keys, so each runs its transaction in the client: a single job's CALL is rung after);
        // its one connection MUST go to the enqueue first (a ring waiting there for the commit
        // would hold each enqueue up for the ring's whole wait).
        const took = new Map<number, number>();
        const enqueuedAt = await enqueueFromAnotherProcess(target.url, prefix, name, 20, 30, took, 1, true);
        await until('20 jobs started', () => started.size >= 20, 10);
        expect(started.size).toBe(20);
        // A ring that waited for an enqueue not yet begun held every enqueue up for its whole
        // 50 ms wait (51-57 ms each); a loaded machine slows a few of them on its own.
        const slow = [...took].filter(([, ms]) => ms >= 45);
        expect(slow.length, `enqueues of 45 ms or more: ${slow.map(([i, ms]) => `${i}: ${ms.toFixed(1)} ms`).join(', ')}`).toBeLessThanOrEqual(8);
        // Unrung, a job would wait for the worker's next poll (30 s).
        const late = [...started].filter(([i, at]) => at - enqueuedAt.get(i)! >= 2000);
        expect(late).toEqual([]);
      } finally {
        await w.stop();
      }
    }, 40_000);

    it("doorbell rings never interrupt another statement on the pool: 300 jobs from another process, each run once, the pool's own queries untouched", async () => {
      const name = `r${Date.now()}`;
      const runs = new Map<number, number>();
      // Two workers of one slot each take turns sleeping on the doorbell and being rung, so the
      // sleeping connection goes back to the pool again and again while the application's
      // statements run on the same pool; a ring that reached a connection after its sleeper gave
      // it back would interrupt one of them (error 1317).
      const workers = [0, 1].map(() =>
        db.tr.queue<number>(name).work(async (job) => void runs.set(job.payload, (runs.get(job.payload) ?? 0) + 1), { pollInterval: 30_000, doorbell: true }),
      );
      const appErrors: unknown[] = [];
      let appStatements = 0;
      let producing = true;
      const app = (async () => {
        while (producing) {
          await db.pool.query('SELECT SLEEP(0.002)').then(
            () => void (appStatements += 1),
            (err: unknown) => void appErrors.push(err),
          );
        }
      })();
      const idle = Promise.all(workers.map((w) => once(w, 'idle')));
      try {
        await idle;
        await enqueueFromAnotherProcess(target.url, prefix, name, 300, 5);
        await until('300 jobs run', () => runs.size >= 300, 20);
      } finally {
        producing = false;
        await app;
        await Promise.all(workers.map((w) => w.stop()));
      }
      expect(appErrors).toEqual([]);
      expect(appStatements).toBeGreaterThan(100);
      expect([...runs.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i));
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
    }, 60_000);

    it('an enqueue in another process hands its job to a doorbell worker asleep here: the worker runs it without a claim, attempt 1, with the token and no more lease than the database has', async () => {
      const { client, matching } = counting(mysql2Client(db.pool));
      const counted = await createTaskrow<Mysql2Connection>({ client, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
      const name = `h${Date.now()}`;
      const seen: {
        id: number;
        attempt: number;
        token: number;
        leftMs: number;
        readMs: number;
        at: number;
        db: { token: unknown; phase: unknown; left_us: unknown };
      }[] = [];
      const w = counted.queue<number>(name).work(
        async (job) => {
          const at = wallNow();
          const t0 = performance.now();
          const leftMs = job.leaseLeft();
          const [rows] = await db.pool.query(
            `SELECT token, phase, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), due_at) AS left_us FROM \`${prefix}queue_jobs\` WHERE id = ?`,
            [job.id],
          );
          seen.push({ id: job.id, attempt: job.attempt, token: job.token, leftMs, readMs: performance.now() - t0, at, db: (rows as never[])[0]! });
        },
        { pollInterval: 30_000, doorbell: true, lease: 20_000 },
      );
      // The producer starts and connects now, and enqueues when the gate opens: its start-up is not
      // in the window below.
      let open!: () => void;
      const producer = enqueueFromAnotherProcess(target.url, prefix, name, 1, 0, undefined, 2, false, new Promise<void>((r) => (open = r)));
      producer.catch(() => undefined); // awaited below; observed meanwhile should a check fail first
      const probe = await mysql.createConnection({ uri: target.url });
      try {
        expect(await handRegistration(probe, `\`${prefix}queue_sleepers\``, name)).toBeGreaterThan(0);
        // From about 2.55 s to 5.1 s after it started the idle worker waits without a statement:
        // no poll of its finds the job ready in the moment between the enqueue's commit and the ring.
        await inWait(() => matching(POLL), 8);
        const claims = matching(CLAIMS);
        open();
        const enqueuedAt = await producer;
        await until('the job run', () => seen.length > 0, 10);
        expect(seen).toHaveLength(1);
        const [job] = seen;
        expect(job!.at - enqueuedAt.get(0)!).toBeLessThan(500);
        // No claim: the ring leased the job to the sleeper's token, and the sleeper read it.
        expect(matching(CLAIMS) - claims).toBe(0);
        expect(job!.attempt).toBe(1);
        expect([Number(job!.db.phase), Number(job!.db.token)]).toEqual([2, job!.token]);
        // Counted from the ring, the holder's lease (less its margin: 2 s of 20 s) ends no later than
        // the database's, which was read up to readMs after it; and it is not much shorter.
        expect(job!.leftMs + 2000).toBeLessThanOrEqual(Number(job!.db.left_us) / 1000 + job!.readMs);
        expect(job!.leftMs).toBeGreaterThan(15_000);
      } finally {
        open(); // a producer still waiting goes on and exits
        await probe.end();
        await w.stop();
      }
    }, 40_000);

    it('a job enqueued into a paused queue is not handed to a sleeping worker: it stays ready until the queue is resumed', async () => {
      const name = `hp${Date.now()}`;
      let at = 0;
      const watched = await pollCounting(db.pool, prefix);
      const w = watched.tr.queue<number>(name).work(async () => void (at ||= performance.now()), { pollInterval: 500, doorbell: true });
      const probe = await mysql.createConnection({ uri: target.url });
      try {
        await db.tr.queue(name).pause();
        expect(await handRegistration(probe, `\`${prefix}queue_sleepers\``, name)).toBeGreaterThan(0);
        await enqueueFromAnotherProcess(target.url, prefix, name, 1, 0);
        // Rung, the worker claims nothing from a paused queue: it looks at the queue twice more, the
        // job there all along (a negative check: no event tells that nothing ran).
        const looked = watched.polls(name);
        await until('two polls of the paused queue', () => watched.polls(name) >= looked + 2, 10);
        expect(at).toBe(0);
        const [rows] = await probe.query(`SELECT phase, attempt FROM \`${prefix}queue_jobs\` WHERE queue = ?`, [name]);
        expect((rows as { phase: unknown; attempt: unknown }[]).map((r) => [Number(r.phase), Number(r.attempt)])).toEqual([[0, 0]]);
        const resumedAt = performance.now();
        await db.tr.queue(name).resume();
        expect(await pickedAfter(() => at, resumedAt, 5000)).toBeLessThan(5000);
      } finally {
        await probe.end();
        await w.stop();
      }
    }, 40_000);

    it('a job a ring hands to a worker that is stopping is given back, not run there: another worker runs it once, attempt 1', async () => {
      const name = `hs${Date.now()}`;
      const ran: string[] = [];
      const attempts: number[] = [];
      const watched = await pollCounting(db.pool, prefix);
      const first = watched.tr.queue<number>(name).work(async () => void ran.push('first'), { pollInterval: 30_000, doorbell: true });
      const ringer = await mysql.createConnection({ uri: target.url });
      let second: QueueWorker | undefined;
      try {
        expect(await handRegistration(ringer, `\`${prefix}queue_sleepers\``, name)).toBeGreaterThan(0);
        // From about 2.55 s to 5.1 s after it started the idle worker waits without a statement.
        await inWait(() => watched.polls(name), 8);
        const stopped = first.stop();
        // A producer's enqueue that hands its job to the stopping worker's registration.
        const [res] = await ringer.query(`CALL \`${prefix}enqueue_job_and_hand\`(?, '', 0, 0, 0, NULL, 0, 3, 1, '1', NULL, ?, 1)`, [name, randomBytes(16)]);
        expect((res as { handed: unknown }[][])[0]!.map((r) => Number(r.handed))).toEqual([1]);
        await stopped;
        second = db.tr.queue<number>(name).work(async (job) => void (ran.push('second'), attempts.push(job.attempt)), { pollInterval: 50 });
        await until('the job run', () => ran.length > 0, 10);
        await pause(300); // an observation window, the thing under test: a second run would come in it, and no event tells that none did
        expect(ran).toEqual(['second']);
        expect(attempts).toEqual([1]);
      } finally {
        await ringer.end();
        await first.stop();
        await second?.stop();
      }
    }, 40_000);

    it('a job handed to a sleeper whose connection is lost before it read it is read by its next sleep and run once, long before the lease ends', async () => {
      const name = `hl${Date.now()}`;
      const ran: number[] = [];
      const watched = await pollCounting(db.pool, prefix);
      const w = watched.tr.queue<number>(name).work(async (job) => void ran.push(job.attempt), { pollInterval: 30_000, doorbell: true });
      const ringer = await mysql.createConnection({ uri: target.url });
      const app = await db.pool.getConnection();
      const sleepers = `\`${prefix}queue_sleepers\``;
      try {
        const token = await handRegistration(ringer, sleepers, name);
        expect(token).toBeGreaterThan(0);
        await inWait(() => watched.polls(name), 8); // the idle worker's wait without a statement (see above)
        await app.beginTransaction();
        const { id } = await db.tr.in(app).queue(name).enqueue(1); // nothing in this process rings for it
        await app.commit();
        // A ring taken apart: it holds the guard row, hands the job to the sleeper's current token
        // (for 30 s), and the sleeper's connection is killed before it can read it.
        await ringer.query('BEGIN');
        await ringer.query(`UPDATE ${sleepers} SET rings = rings + 1 WHERE queue = ? AND conn = 0`, [name]);
        const [regs] = await ringer.query(`SELECT conn, token FROM ${sleepers} WHERE queue = ? AND conn > 0 AND token > 0`, [name]);
        const reg = (regs as { conn: unknown; token: unknown }[])[0]!;
        const [leased] = await ringer.query(
          `UPDATE \`${prefix}queue_jobs\` SET due_at = UTC_TIMESTAMP(6) + INTERVAL 30 SECOND, attempt = attempt + 1, token = ?, ready_priority = 0, phase = 2 WHERE id = ? AND phase = 0`,
          [reg.token, id],
        );
        expect((leased as { affectedRows: number }).affectedRows).toBe(1);
        await ringer.query(`KILL ${Number(reg.conn)}`);
        await ringer.query('COMMIT');
        const committedAt = performance.now();
        await until('the job run', () => ran.length > 0, 10);
        expect(performance.now() - committedAt).toBeLessThan(10_000);
        await pause(300); // an observation window, the thing under test: a second run would come in it, and no event tells that none did
        expect(ran).toEqual([1]);
      } finally {
        app.release();
        await ringer.end();
        await w.stop();
      }
    }, 40_000);

    it("a sleeper whose registration a ring has read stays in its transaction until that ring's KILL is done, and gives its connection back after", async () => {
      const name = `g${Date.now()}`;
      const w = db.tr.queue<number>(name).work(async () => undefined, { pollInterval: 30_000, doorbell: true });
      const ringer = await mysql.createConnection({ uri: target.url });
      const sleepers = `\`${prefix}queue_sleepers\``;
      try {
        // A ring, taken apart: the guard row, then the registration (READ UNCOMMITTED), and no KILL yet.
        const id = await ringApart(ringer, sleepers, name);
        expect(id).toBeGreaterThan(0);
        // Its SLEEP(1) ends; the sleeper then waits for the guard row this ring holds, inside its transaction.
        let info: string | null = null;
        await until('the sleeper waiting for the guard row', async () => /LOCK IN SHARE MODE/.test((info = await statementOf(ringer, id)) ?? ''), 15);
        expect(info).toMatch(/LOCK IN SHARE MODE/);
        await ringer.query(`KILL QUERY ${id}`); // interrupts that wait: the sleeper waits again
        // An observation window, the thing under test: the sleeper still waits in it while the ring holds the guard.
        await pause(100);
        expect(await statementOf(ringer, id)).toMatch(/LOCK IN SHARE MODE/);
        await ringer.query('COMMIT');
        await until('the sleeper past the guard row', async () => !/LOCK IN SHARE MODE/.test((await statementOf(ringer, id)) ?? ''), 5);
        expect((await statementOf(ringer, id)) ?? 'idle').not.toMatch(/LOCK IN SHARE MODE/);
      } finally {
        await ringer.end();
        await w.stop();
      }
    }, 40_000);

    it('a ring whose KILL reaches a sleeper after its sleep ended (waiting for the guard row) still wakes the workers at once', async () => {
      const name = `k${Date.now()}`;
      const { w, picked, polls } = await pickingWorker(name);
      const ringer = await mysql.createConnection({ uri: target.url });
      const app = await db.pool.getConnection();
      try {
        // A ring taken apart, as above: it holds the guard row and has read the registration.
        const id = await ringApart(ringer, `\`${prefix}queue_sleepers\``, name);
        expect(id).toBeGreaterThan(0);
        // The idle worker's waits double from 10 ms: from about 2.55 s to 5.1 s after it started it
        // waits without a statement. The sleeper's SLEEP(1) has ended; it waits for the guard row.
        await until(
          'the sleeper waiting for the guard row, the worker in its wait',
          async () => /LOCK IN SHARE MODE/.test((await statementOf(app, id)) ?? '') && polls() >= 8,
          15,
        );
        expect(await statementOf(app, id)).toMatch(/LOCK IN SHARE MODE/);
        // A job committed where nothing in this process rings for it, then the ring's KILL.
        await enqueueUnrung(app, name);
        const killedAt = performance.now();
        await ringer.query(`KILL QUERY ${id}`);
        expect(await pickedAfter(picked, killedAt, 5000)).toBeLessThan(1000);
        await ringer.query('COMMIT');
      } finally {
        app.release();
        await ringer.end();
        await w.stop();
      }
    }, 40_000);

    it('a ring whose KILL never reaches the sleeper (counted on the guard row, no KILL) still wakes the workers by the end of that sleep', async () => {
      const name = `c${Date.now()}`;
      const { w, picked, polls } = await pickingWorker(name);
      const ringer = await mysql.createConnection({ uri: target.url });
      const app = await db.pool.getConnection();
      try {
        await ringer.query('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
        // The idle worker waits without a statement from about 5.1 s to 10.2 s after it started.
        await inWait(polls, 9);
        await enqueueUnrung(app, name);
        // A ring whose KILL is lost (it reached the connection between two statements): it counts
        // itself on the guard row and reads the registration, and no KILL arrives.
        await ringer.query('BEGIN');
        await ringer.query(`UPDATE \`${prefix}queue_sleepers\` SET rings = rings + 1 WHERE queue = ? AND conn = 0`, [name]);
        const [rows] = await ringer.query(`SELECT conn FROM \`${prefix}queue_sleepers\` WHERE queue = ? AND conn > 0`, [name]);
        expect((rows as unknown[]).length).toBe(1);
        await ringer.query('COMMIT');
        const rangAt = performance.now();
        // By the end of the sleep it was in (1 s at most), not at the worker's next poll (about 4 s on).
        expect(await pickedAfter(picked, rangAt, 4000)).toBeLessThan(2000);
      } finally {
        app.release();
        await ringer.end();
        await w.stop();
      }
    }, 40_000);

    it('a ring that comes while the sleeper is between two sleeps (no registration) wakes the workers as soon as it sleeps again', async () => {
      const name = `b${Date.now()}`;
      const started = new Map<number, number>();
      const watched = await pollCounting(db.pool, prefix);
      const w = watched.tr.queue<number>(name).work(async (job) => void started.set(job.payload, wallNow()), { pollInterval: 30_000, doorbell: true });
      const probe = await mysql.createConnection({ uri: target.url });
      const sleepers = `\`${prefix}queue_sleepers\``;
      const rings = async (): Promise<number> =>
        Number(((await probe.query(`SELECT rings FROM ${sleepers} WHERE queue = ? AND conn = 0`, [name]))[0] as { rings: unknown }[])[0]?.rings ?? -1);
      let held: mysql.PoolConnection[] = [];
      try {
        await probe.query('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
        // The idle worker waits without a statement from about 5.1 s to 10.2 s after it started.
        await inWait(() => watched.polls(name), 9);
        // Every connection of the db.pool, the sleeper's once its sleep ends: it cannot register again.
        held = await Promise.all(Array.from({ length: 4 }, () => db.pool.getConnection()));
        const [registered] = await probe.query(`SELECT conn FROM ${sleepers} WHERE queue = ? AND conn > 0`, [name]);
        expect(registered).toEqual([]);
        const before = await rings();
        expect(before).toBeGreaterThanOrEqual(0);
        const enqueuedAt = await enqueueFromAnotherProcess(target.url, prefix, name, 1, 0);
        // The producer's ring found no registration; it counted itself all the same.
        await until("the producer's ring counted", async () => (await rings()) !== before, 5);
        expect(await rings()).toBeGreaterThan(before);
        expect(started.size).toBe(0);
        const releasedAt = wallNow();
        for (const c of held) c.release();
        held = [];
        await until('job 0 started', () => started.has(0), 4);
        expect(started.has(0)).toBe(true);
        // At its next sleep, not at the worker's next poll (about 10.2 s after it started).
        expect(started.get(0)! - Math.max(releasedAt, enqueuedAt.get(0)!)).toBeLessThan(1000);
      } finally {
        for (const c of held) c.release();
        await probe.end();
        await w.stop();
      }
    }, 40_000);
  });
}

// Two databases in one process with the same prefix and queue name: workers share their polls only
// with workers reading through the same client, so each database is still polled.
describe('fast pickup · two databases, one process, same tables', () => {
  it('an idle worker of the second database picks up its job although a worker of the first keeps polling', async () => {
    const pair = targets().slice(0, 2);
    expect(pair.length).toBe(2);
    const prefix = `fq${process.pid.toString(36)}_`;
    const name = `two${Date.now()}`;
    const dbs = await Promise.all(pair.map((t) => openMigratedPool(t, { prefix })));
    const pools = dbs.map((d) => d.pool);
    const watched = await Promise.all(pools.map((p) => pollCounting(p, prefix)));
    const trs = watched.map((w) => w.tr);
    let picked = 0;
    // The first polls five times as often: every 0.05 s wait of the second sees one of its looks.
    const first = trs[0]!.queue(name).work(async () => undefined, { pollInterval: 10 });
    const second = trs[1]!.queue(name).work(async () => void (picked = performance.now()), { pollInterval: 50 });
    try {
      await until("the second worker's waits grown to its pollInterval", () => watched[1]!.polls(name) >= 4, 10); // both poll at their pollInterval now
      // Enqueued inside an application transaction: nothing rings in this process.
      const conn = await pools[1]!.getConnection();
      try {
        await conn.beginTransaction();
        await trs[1]!.in(conn).queue(name).enqueue('x');
        await conn.commit();
      } finally {
        conn.release();
      }
      const t0 = performance.now();
      await until('the job picked up', () => picked > 0, 5);
      expect(picked).toBeGreaterThan(0);
      expect(picked - t0).toBeLessThan(500);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
      for (const d of dbs) await d.end();
    }
  }, 30_000);

  it("an enqueue into the first database wakes its napping worker although a claim of the second database's worker is about to read", async () => {
    const pair = targets().slice(0, 2);
    expect(pair.length).toBe(2);
    const prefix = `fr${process.pid.toString(36)}_`;
    const name = `cover${Date.now()}`;
    const dbs = await Promise.all(pair.map((t) => openMigratedPool(t, { prefix })));
    const pools = dbs.map((d) => d.pool);
    const watched = await pollCounting(pools[0]!, prefix);
    const first = watched.tr;
    // The second database's transactions wait at `held` (after BEGIN, before their first statement).
    let open: () => void = () => undefined;
    const held = new Promise<void>((r) => (open = r));
    let reached: () => void = () => undefined;
    const atGate = new Promise<void>((r) => (reached = r));
    const inner = mysql2Client(pools[1]!);
    // No kept connection (`session`) and no CALLs (`endsInterrupted` unknown): every claim of the second database is a transaction through the gate.
    const gated: SqlClient = {
      ...inner,
      session: undefined,
      endsInterrupted: false,
      transaction: (fn, options) => inner.transaction(async (conn) => (reached(), await held, fn(conn)), options),
    };
    const second = await createTaskrow<Mysql2Connection>({ client: gated, joinTransaction: (tx) => mysql2Client(tx, true), options: { prefix } });
    let picked = 0;
    const w1 = first.queue(name).work(async () => void (picked = performance.now()), { pollInterval: 30_000 });
    let w2: QueueWorker | undefined;
    try {
      await inWait(() => watched.polls(name), 8); // the first worker is inside its 2.55 s to 5.1 s wait
      w2 = second.queue(name).work(async () => undefined, { pollInterval: 30_000 });
      await atGate; // its first claim has begun and not read the queue
      const t0 = performance.now();
      await first.queue(name).enqueue('x');
      await until('the job picked up', () => picked > 0, 5);
      expect(picked).toBeGreaterThan(0);
      expect(picked - t0).toBeLessThan(1000);
    } finally {
      open();
      await Promise.all([w1.stop(), w2?.stop()]);
      for (const d of dbs) await d.end();
    }
  }, 30_000);
});
