import * as mariadb from 'mariadb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Taskrow } from '@taskrow/core';
import { taskrow as mariadbTaskrow } from '@taskrow/mariadb';
import { dropPrefix } from '@taskrow/core/conformance';
import { mariadbConfig } from '../../src/harnesses/mariadb.js';
import { mysql2Probe } from '../../src/harnesses/mysql2.js';
import type { ServerTarget } from '@taskrow/servers';
import { openMigratedPool, type OwnProbe } from '../../src/setup.js';
import { label, targets } from '../../src/targets.js';

/** The statements of one application connection, whatever the driver. */
interface AppConnection {
  begin(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<unknown>;
  rollback(): Promise<void>;
  commit(): Promise<void>;
  release(): void;
}

/** An adapter's taskrow over a pool on a migrated prefix, that pool's connections as the application would use them, and a probe. */
interface Opened {
  tr: Taskrow<unknown>;
  probe: OwnProbe;
  connection(): Promise<{ app: AppConnection; tx: unknown }>;
  /** Drops the prefix's tables and procedures, then ends the probe and the pool. */
  end(): Promise<void>;
}

/** A statement that gets no answer within half a second fails. */
const statementTimeout = 500;

const opens: Record<string, (target: ServerTarget, prefix: string) => Promise<Opened>> = {
  async mysql2(target, prefix) {
    const db = await openMigratedPool(target, { prefix, taskrow: { statementTimeout } });
    return {
      tr: db.tr as Taskrow<unknown>,
      probe: db.probe,
      async connection() {
        const c = await db.pool.getConnection();
        return {
          tx: c,
          app: {
            begin: () => c.beginTransaction(),
            query: (s, p) => c.query(s, p),
            rollback: () => c.rollback(),
            commit: () => c.commit(),
            release: () => c.release(),
          },
        };
      },
      end: () => db.end(),
    };
  },
  // The shared set-up opens a mysql2 pool; this one is the `mariadb` driver's own.
  async mariadb(target, prefix) {
    const pool = mariadb.createPool(mariadbConfig(target));
    const tr = (await mariadbTaskrow(pool, { prefix, statementTimeout })) as Taskrow<unknown>;
    const probe = await tr
      .migrate()
      .then(() => mysql2Probe(target.url))
      .catch(async (err: unknown) => {
        await pool.end();
        throw err;
      });
    return {
      tr,
      probe,
      async connection() {
        const c = await pool.getConnection();
        return {
          tx: c,
          app: {
            begin: () => c.beginTransaction(),
            query: (s, p) => c.query(s, p),
            rollback: () => c.rollback(),
            commit: () => c.commit(),
            release: () => void c.release(),
          },
        };
      },
      async end() {
        try {
          await dropPrefix(probe, prefix);
        } finally {
          await probe.end().catch(() => undefined);
          await pool.end().catch(() => undefined);
        }
      },
    };
  },
};

// Inside the application's transaction (`tr.in(tx)`), a statement that gets no answer within
// `statementTimeout` rejects while the work that sent it is still pending on the connection. The
// application then rolls back; if taskrow's abandoned work went on to send its next statement, that
// statement would run after the ROLLBACK, in autocommit, and commit on its own: a job completed
// without the work the application rolled back with it.
for (const target of targets()) {
  for (const [adapter, open] of Object.entries(opens)) {
    describe(`${label(target)} · ${adapter} · work abandoned after no answer`, () => {
      const prefix = `aw${process.pid.toString(36)}_`;
      let opened: Opened;

      beforeAll(async () => {
        opened = await open(target, prefix);
      });
      afterAll(async () => {
        await opened?.end();
      });

      it('an ack in the application transaction that timed out sends nothing after the application rolls back: the job stays held', async () => {
        const name = `a${Date.now()}`;
        const q = opened.tr.queue(name);
        await q.enqueue({ n: 1 });
        const [job] = await q.claim({ limit: 1, lease: 60_000 });
        // Another session holds the job's row, so the ack's locking read waits past the timeout.
        const locker = await opened.connection();
        const app = await opened.connection();
        try {
          await locker.app.begin();
          await locker.app.query(`SELECT id FROM \`${prefix}queue_jobs\` WHERE id = ? FOR UPDATE`, [job!.id]);
          await app.app.begin();
          const err = (await opened.tr
            .in(app.tx)
            .queue(name)
            .complete(job!)
            .then(
              () => undefined,
              (e: unknown) => e,
            )) as { code?: string } | undefined;
          expect(err?.code).toBe('CONNECTION_LOST');
          const rolledBack = app.app.rollback(); // queued behind the waiting read
          await locker.app.commit(); // the read now returns; the abandoned ack must not go on
          await rolledBack;
          await app.app.query('SELECT 1'); // every statement queued on the connection so far has run
        } finally {
          locker.app.release();
          app.app.release();
        }
        const rows = await opened.probe.query<{ phase: number; token: number }>(`SELECT phase, token FROM \`${prefix}queue_jobs\` WHERE id = ?`, [job!.id]);
        expect(rows.map((r) => ({ phase: Number(r.phase), token: Number(r.token) }))).toEqual([{ phase: 2, token: job!.token }]);
        await q.complete(job!); // still held by its claim
        expect(await opened.probe.query(`SELECT id FROM \`${prefix}queue_jobs\` WHERE id = ?`, [job!.id])).toEqual([]);
      });
    });
  }
}
