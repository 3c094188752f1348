import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SqlClient, Taskrow, TaskrowOptions } from '@taskrow/core';
import { dropPrefix } from '@taskrow/core/conformance';
import type { ServerTarget } from '@taskrow/servers';
import { mysql2Probe } from './harnesses/mysql2.js';
import { until, type OwnProbe } from './setup.js';
import { label, targets } from './targets.js';

/** taskrow's `statementTimeout` (milliseconds) in these cases: the longest taskrow waits for one statement. */
export const STATEMENT_TIMEOUT = 500;
/** taskrow's `retry.attempts`: the abandoned statement is tried this many times in all. */
export const ATTEMPTS = 2;
/** The lease (milliseconds) of the jobs the extend waits on: long enough never to pass during a case. */
export const LEASE = 60_000;
/** The server's `SLEEP` (seconds) of the statement the AbortSignal gives up: far longer than a case. */
export const SLEEP = 60;
/** The longest (seconds) the server may take to end an abandoned statement after taskrow gave it up. */
export const ENDED_WITHIN = 2;
/** Connections in each pool: Kysely 0.28 sends its KILL over a second one (its README). */
export const POOL_SIZE = 3;

/** taskrow's options in these cases. */
export const options = (prefix: string): TaskrowOptions => ({ prefix, statementTimeout: STATEMENT_TIMEOUT, retry: { attempts: ATTEMPTS } });

/** An adapter over a pool of `POOL_SIZE`: taskrow with `options`, and its `SqlClient` (the port the engine drives). */
export interface Opened {
  tr: Taskrow<unknown>;
  client: SqlClient;
  end(): Promise<void>;
}

/** Opens one adapter over a pool of `POOL_SIZE` on `target`, taskrow with `options(prefix)`. */
export type OpenAbandoning = (target: ServerTarget, prefix: string) => Promise<Opened>;

/**
 * The server threads (other than the probe's own) running a statement whose text contains `text`.
 * MySQL fails a read of `information_schema.processlist` while a statement's text is not valid
 * UTF-8 (the `mariadb` driver sends binary values inline), so there `performance_schema.threads`
 * is read; MariaDB leaves the performance schema off by default.
 */
async function running(probe: OwnProbe, target: ServerTarget, text: string): Promise<number[]> {
  const like = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const sql =
    target.engine === 'mysql'
      ? 'SELECT processlist_id AS id FROM performance_schema.threads WHERE processlist_id <> CONNECTION_ID() AND processlist_info LIKE ?'
      : 'SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() AND info LIKE ?';
  return (await probe.query<{ id: unknown }>(sql, [like])).map((r) => Number(r.id));
}

/** True when the probe can lock row `id` of `table` at once (no session holds it). */
async function lockable(probe: OwnProbe, table: string, id: number): Promise<boolean> {
  const rows = await probe.query<{ id: unknown }>(`SELECT id FROM ${table} WHERE id = ? FOR UPDATE SKIP LOCKED`, [id]);
  return rows.length === 1 && Number(rows[0]!.id) === id;
}

/**
 * Starts `p` without waiting for it: the engine never waits for a call it gave up (it races it), and
 * mysql2 never settles a statement whose connection was destroyed.
 */
const started = (p: Promise<unknown>): void => void p.catch(() => undefined);

// The abandoned-work rule through each adapter: a statement taskrow gives up (its statement
// timeout passed, or the engine's AbortSignal fired) MUST NOT go on on the server. The call
// rejects in bounded time, and soon after no statement of it still runs and no lock of it is still
// held: destroying the connection alone does neither (a lock wait runs on until
// innodb_lock_wait_timeout, its transaction's locks held), so the adapter has the session KILLed.
// No rejection may go unhandled on any of these paths (the `mariadb` driver's destroy() raised one).
export function describeAbandonedStatement(adapters: Readonly<Record<string, OpenAbandoning>>, over: readonly ServerTarget[] = targets()): void {
  for (const target of over) {
    for (const adapter of Object.keys(adapters)) {
      describe(`${label(target)} · ${adapter} · a statement taskrow gives up ends on the server`, () => {
        const prefix = `as${process.pid.toString(36)}${adapter.slice(0, 3)}_`;
        const table = `${prefix}rows`;
        const jobs = `\`${prefix}queue_jobs\``;
        let opened: Opened;
        let probe: OwnProbe;
        let holder: OwnProbe;
        const unhandled: unknown[] = [];
        const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

        beforeAll(async () => {
          process.on('unhandledRejection', onUnhandled);
          probe = await mysql2Probe(target.url);
          holder = await mysql2Probe(target.url);
          opened = await adapters[adapter]!(target, prefix);
          await opened.tr.migrate();
          await probe.query(`CREATE TABLE \`${table}\` (id INT NOT NULL PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB`);
        });
        afterEach(async () => {
          await holder.query('ROLLBACK').catch(() => undefined);
          expect(unhandled, 'unhandled rejections').toEqual([]);
        });
        afterAll(async () => {
          try {
            await opened?.end().catch(() => undefined);
            await holder?.end().catch(() => undefined);
            if (probe) {
              await probe.query(`DROP TABLE IF EXISTS \`${table}\``);
              await dropPrefix(probe, prefix);
              await probe.end();
            }
            // A KILL still in the background when the pool ended fails then: that too MUST be handled.
            await new Promise((resolve) => setImmediate(resolve));
            expect(unhandled, 'unhandled rejections after the pool ended').toEqual([]);
          } finally {
            process.off('unhandledRejection', onUnhandled);
          }
        });

        it('statementTimeout: an extend waiting on a locked job rejects in bounded time, then neither runs nor holds the other job', async () => {
          const q = opened.tr.queue(`st${Date.now()}`);
          await q.enqueueMany([{ payload: 1 }, { payload: 2 }]);
          const [first, second] = await q.claim({ limit: 2, lease: LEASE });
          expect(first!.id).toBeLessThan(second!.id);
          // Another session holds the second job's row: the extend's locking read takes the first and waits.
          await holder.query('BEGIN');
          await holder.query(`SELECT id FROM ${jobs} WHERE id = ? FOR UPDATE`, [second!.id]);
          const t0 = performance.now();
          const err = (await q.extend([first!, second!], LEASE).then(
            () => undefined,
            (e: unknown) => e,
          )) as { code?: string } | undefined;
          const tookMs = performance.now() - t0;
          expect(err?.code).toBe('CONNECTION_LOST');
          // Each attempt is given up after the timeout; the backoff between them is short.
          expect(tookMs).toBeLessThan(ATTEMPTS * STATEMENT_TIMEOUT + 2000);
          await until('no statement of the extend runs on the server', async () => (await running(probe, target, jobs)).length === 0, ENDED_WITHIN);
          // Had the abandoned transaction lived on, it would hold the first job's row (the server
          // rolls a killed session back just after its statement ends).
          await until('no lock is held on the first job', async () => await lockable(probe, jobs, first!.id), ENDED_WITHIN);
          await holder.query('COMMIT');
          // Both jobs are still held by their claim, and the pool lends again.
          await q.complete([first!, second!]);
          expect(await probe.query(`SELECT id FROM ${jobs} WHERE id IN (?, ?)`, [first!.id, second!.id])).toEqual([]);
        });

        it('AbortSignal: a SLEEP given up no longer runs on the server, and the pool lends again', async () => {
          const marker = `ab_${process.pid}_${adapter.replace(/\W/g, '_')}_sleep`;
          const sql = `SELECT SLEEP(${SLEEP}) AS ${marker}`;
          const abort = new AbortController();
          started(opened.client.query(sql, [], { signal: abort.signal }));
          await until('the SLEEP runs on the server', async () => (await running(probe, target, marker)).length === 1, ENDED_WITHIN);
          abort.abort();
          await until('the SLEEP no longer runs on the server', async () => (await running(probe, target, marker)).length === 0, ENDED_WITHIN);
          expect((await opened.client.query<{ one: unknown }>('SELECT 1 AS one')).rows.map((r) => Number(r.one))).toEqual([1]);
        });

        it('AbortSignal: a transaction given up in a lock wait no longer runs and holds none of its locks', async () => {
          await probe.query(`DELETE FROM \`${table}\``);
          await probe.query(`INSERT INTO \`${table}\` (id, v) VALUES (1, 0), (2, 0)`);
          await holder.query('BEGIN');
          await holder.query(`SELECT id FROM \`${table}\` WHERE id = 2 FOR UPDATE`);
          const abort = new AbortController();
          started(
            opened.client.transaction(
              async (conn) => {
                await conn.query(`UPDATE \`${table}\` SET v = 1 WHERE id = 1`);
                await conn.query(`UPDATE \`${table}\` SET v = 1 WHERE id = 2`);
              },
              { signal: abort.signal },
            ),
          );
          await until(
            'the second UPDATE waits for its lock',
            async () => (await running(probe, target, `${table}\` SET v = 1 WHERE id = 2`)).length === 1,
            ENDED_WITHIN,
          );
          abort.abort();
          await until(
            'no statement of the transaction runs on the server',
            async () => (await running(probe, target, `\`${table}\` SET`)).length === 0,
            ENDED_WITHIN,
          );
          // The server rolls a killed session back just after its statement ends.
          await until('no lock is held on row 1', async () => await lockable(probe, `\`${table}\``, 1), ENDED_WITHIN);
          await holder.query('COMMIT');
          // Rolled back: neither UPDATE took effect, and none runs now that the lock is free.
          expect((await probe.query<{ v: unknown }>(`SELECT v FROM \`${table}\` ORDER BY id`)).map((r) => Number(r.v))).toEqual([0, 0]);
        });
      });
    }
  }
}
