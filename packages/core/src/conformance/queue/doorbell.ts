import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import { lockingSession, type SuiteContext } from '../session.js';
import { until } from './probe.js';

const CASE = 'a worker on the doorbell wakes when a ring interrupts its sleep, seconds before its next poll, and stop() gives its sleeping connection back';

/** `work({ doorbell: true })`: the sleeping connection, woken by a ring taken apart through the probe. */
export function queueDoorbell<Tx>(ctx: () => SuiteContext<Tx>): void {
  it(CASE, async () => {
    const c = ctx();
    // The ring reads registrations that are never committed: on a cluster only their node sees them.
    const session = await lockingSession(c, `queue › doorbell › ${CASE}`);
    const sleepers = `\`${c.prefix}queue_sleepers\``;
    const queue = freshName('q');
    const started: number[] = [];
    const w = session.taskrow.queue(queue).work(async () => void started.push(performance.now()), { pollInterval: 30_000, doorbell: true });
    try {
      // An observation window, not a wait for the database: idle this long, the worker's waits
      // between polls (10 ms, 20 ms, ... doubling) have reached the one that runs to about 10.2 s.
      await new Promise((r) => setTimeout(r, 5500));
      // Enqueued inside an application transaction: nothing rings (that commit is the application's).
      await session.withDriverTransaction('commit', (tx) => session.taskrow.in(tx).queue(queue).enqueue('x'));
      // The ring by hand: the queue's guard row, the registration (READ UNCOMMITTED), KILL QUERY.
      let conn = 0;
      await until(
        'a registered sleeper',
        async () => {
          await session.probe.query('SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
          await session.probe.query('BEGIN');
          await session.probe.query(`SELECT conn FROM ${sleepers} WHERE queue = ? AND conn = 0 FOR UPDATE`, [queue]);
          const rows = await session.probe.query<{ conn: unknown }>(`SELECT conn FROM ${sleepers} WHERE queue = ? AND conn > 0`, [queue]);
          conn = Number(rows[0]?.conn ?? 0);
          if (conn === 0) await session.probe.query('COMMIT');
          return conn > 0;
        },
        10,
      );
      const rungAt = performance.now();
      try {
        await session.probe.query(`KILL QUERY ${conn}`);
      } finally {
        await session.probe.query('COMMIT');
      }
      await until('the job started', () => started.length === 1, 10);
      expect(started[0]! - rungAt).toBeLessThan(2000);
      // stop() resolves with the sleeping connection back: no registration left, even uncommitted.
      await w.stop();
      await session.probe.query('SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
      await session.probe.query('BEGIN');
      const left = await session.probe.query<{ conn: unknown }>(`SELECT conn FROM ${sleepers} WHERE queue = ? AND conn > 0`, [queue]);
      await session.probe.query('COMMIT');
      expect(left).toEqual([]);
    } finally {
      await w.stop();
    }
  });

  const handed =
    "an enqueue by the hand-off procedure leases its job to a sleeping worker's registration and wakes it: the worker runs it under that token, attempt 1 (not on a multi-writer cluster: no token there, a plain ring)";
  it(handed, async () => {
    const c = ctx();
    const session = await lockingSession(c, `queue › doorbell › ${handed}`);
    const sleepers = `\`${c.prefix}queue_sleepers\``;
    const queue = freshName('q');
    const seen: { token: number; attempt: number; payload: unknown }[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const w = session.taskrow.queue(queue).work(
      async (job) => {
        seen.push({ token: job.token, attempt: job.attempt, payload: job.payload });
        await held;
      },
      { pollInterval: 30_000, doorbell: true },
    );
    try {
      let token = 0;
      await until(
        'a registered sleeper',
        async () => {
          await session.probe.query('SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
          const rows = await session.probe.query<{ token: unknown }>(`SELECT token FROM ${sleepers} WHERE queue = ? AND conn > 0`, [queue]);
          token = Number(rows[0]?.token ?? 0);
          return rows.length > 0;
        },
        10,
      );
      expect(token > 0).toBe(!c.target.multiWriterCluster);
      // The procedure as a producer calls it: queue, group, phase (ready), priorities, no time, no
      // delay, 3 attempts, a token, the payload's JSON, no concurrency key, a receipt, ring 1.
      const receipt = Buffer.from(Array.from({ length: 16 }, (_, i) => (i * 37 + Date.now()) % 256));
      const rows = await session.probe.query<unknown>(`CALL \`${c.prefix}enqueue_job_and_hand\`(?, '', 0, 0, 0, NULL, 0, 3, 1, '"x"', NULL, ?, 1)`, [
        queue,
        receipt,
      ]);
      const answer = ((Array.isArray(rows[0]) ? rows[0] : rows) as { id: unknown; found: unknown; handed: unknown }[])[0]!;
      expect([Number(answer.found), Number(answer.handed)]).toEqual([1, token > 0 ? 1 : 0]);
      await until('the job started', () => seen.length === 1, 10);
      expect(seen[0]!.payload).toBe('x');
      if (token > 0) {
        // Leased to the registration's token by the enqueue, not by a claim (a claim's token is its own).
        expect(seen).toEqual([{ token, attempt: 1, payload: 'x' }]);
        const job = await session.probe.query<{ phase: unknown; token: unknown; attempt: unknown }>(
          `SELECT phase, token, attempt FROM \`${c.prefix}queue_jobs\` WHERE id = ?`,
          [Number(answer.id)],
        );
        expect(job.map((r) => [Number(r.phase), Number(r.token), Number(r.attempt)])).toEqual([[2, token, 1]]);
      }
    } finally {
      release();
      await w.stop();
    }
  });

  const killed =
    'an enqueue from a process without workers of the queue interrupts a sleeping connection with its ring: a sleep of 30 s that nothing else ends returns within seconds';
  it(killed, async () => {
    const c = ctx();
    // The sleeper's registration is never committed: on a cluster only its node sees it.
    const session = await lockingSession(c, `queue › doorbell › ${killed}`);
    const sleepers = `\`${c.prefix}queue_sleepers\``;
    const queue = freshName('q');
    // A sleeper as a doorbell keeps one, made by hand on the probe's connection: the guard row, an
    // uncommitted registration, and a plain SLEEP(30) (no count of rings to compare: only a KILL ends it early).
    await session.probe.query(`INSERT IGNORE INTO ${sleepers} (queue, conn) VALUES (?, 0)`, [queue]);
    await session.probe.query('SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
    await session.probe.query('BEGIN');
    try {
      await session.probe.query(`INSERT INTO ${sleepers} (queue, conn) VALUES (?, CONNECTION_ID())`, [queue]);
      const t0 = performance.now();
      let sleptMs: number | undefined;
      // Interrupted, MySQL ends the SLEEP with 1, MariaDB with error 1317: anything else is not a ring's doing.
      const sleep = session.probe.query<{ s: unknown }>('SELECT SLEEP(30) AS s').then(
        (rows) => Number(rows[0]?.s),
        (err: unknown) => (err as { errno?: unknown }).errno,
      );
      void sleep.then(() => void (sleptMs = performance.now() - t0));
      // A ring that lands before the SLEEP has begun is lost (the server clears a KILL between
      // statements), so enqueue until it ends: each enqueue rings (the last ring found a sleeper).
      const q = session.taskrow.queue(queue);
      await until(
        'the sleep ended',
        async () => {
          if (sleptMs === undefined) await q.enqueue('x');
          return sleptMs !== undefined;
        },
        40,
      );
      expect(await sleep).toBe(c.target.engine === 'mysql' ? 1 : 1317);
      expect(sleptMs).toBeLessThan(15_000);
    } finally {
      await session.probe.query('ROLLBACK');
    }
  }, 60_000);
}
