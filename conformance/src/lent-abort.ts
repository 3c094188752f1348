import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Taskrow } from '@taskrow/core';
import type { ServerTarget } from '@taskrow/servers';
import { startProxy, type Proxy } from '../chaos/proxy.js';
import { mysql2Probe } from './harnesses/mysql2.js';
import { label, targets } from './targets.js';

/** How long (ms) the engine waits for one statement in these cases: short, so a silent socket is given up quickly. */
export const STATEMENT_TIMEOUT = 1000;

/** A taskrow through one of the library adapters over a pool of one connection. */
export interface Opened {
  tr: Taskrow<unknown>;
  end(): Promise<void>;
}

/** Opens a taskrow through an adapter over a pool of one connection to `url`, with `STATEMENT_TIMEOUT`. */
export type OpenAdapter = (url: string, prefix: string) => Promise<Opened>;

/**
 * A library adapter (Knex, Drizzle, TypeORM, Sequelize, Kysely from 0.29 on) lends one pooled
 * connection to each of taskrow's autocommit statements and transactions. When that connection
 * goes silent (no reply, no FIN, no RST), the engine stops waiting after its statement timeout;
 * the adapter MUST then close the connection and give its slot back, or a pool of one would never
 * lend again and every later statement would time out too. One describe per adapter and server.
 */
export function describeLentAbort(adapters: Readonly<Record<string, OpenAdapter>>, over: readonly ServerTarget[] = targets() as ServerTarget[]): void {
  for (const target of over) {
    for (const adapter of Object.keys(adapters)) {
      describe(`${label(target)} · ${adapter} · a lent connection on a silent socket`, () => {
        const prefix = `la${process.pid.toString(36)}${adapter.slice(0, 2)}_`;
        let probe: Awaited<ReturnType<typeof mysql2Probe>>;
        let proxy: Proxy;
        let opened: Opened;

        beforeAll(async () => {
          probe = await mysql2Probe(target.url);
          const direct = await adapters[adapter]!(target.url, prefix);
          await direct.tr.migrate();
          await direct.end();
          const u = new URL(target.url);
          proxy = await startProxy({ host: u.hostname, port: Number(u.port) });
          opened = await adapters[adapter]!(proxy.url(target.url), prefix);
        });

        afterAll(async () => {
          await opened?.end();
          await proxy?.close();
          for (const { t } of await probe.query<{ t: string }>(
            'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
            [`${prefix}%`],
          )) {
            await probe.query(`DROP TABLE \`${t}\``);
          }
          await probe?.end();
        });

        it('frees the pool of one: the retried enqueue gets a new connection and commits once', async () => {
          const queue = opened.tr.queue<{ n: number }>('lent');
          await queue.enqueue({ n: 1 }); // the pool's one connection is open now
          expect(proxy.connections.length).toBe(1);
          const silent = proxy.connections[0]!;
          silent.setMode('blackhole'); // connections made from now on forward
          const t0 = performance.now();
          const { id } = await queue.enqueue({ n: 2 });
          const tookMs = performance.now() - t0;
          expect(proxy.counters.blackholedBytes).toBeGreaterThan(0); // the first try went to the silent socket
          // One statement timeout on the silent socket, then a fresh connection: well before ten
          // attempts of one second each would give up.
          expect(tookMs).toBeLessThan(STATEMENT_TIMEOUT * 5);
          const rows = await probe.query<{ id: unknown; n: unknown }>(
            `SELECT id, JSON_EXTRACT(payload, '$.n') AS n FROM \`${prefix}queue_jobs\` WHERE queue = 'lent' ORDER BY id`,
          );
          expect(rows.map((r) => Number(r.n))).toEqual([1, 2]);
          expect(Number(rows[1]!.id)).toBe(id);
        }, 60_000);

        it('a claim whose connection goes silent inside its transaction: the connection is closed, the server rolls back, a later claim takes the job once', async () => {
          // A claim of one group runs as a transaction (a claim without one is a CALL: next case).
          const queue = opened.tr.queue<{ n: number }>('claimed');
          const { id } = await queue.enqueue({ n: 1 }, { group: 'g' });
          // The claim's locking read reaches the server (which locks the job), its reply never comes
          // back and the connection hears nothing more: silent inside the claim's transaction.
          proxy.loseReplies({ count: 1, then: 'silent', match: (sql) => /FOR UPDATE SKIP LOCKED/.test(sql) });
          const t0 = performance.now();
          let jobs = await queue.claim({ limit: 5, lease: 60_000, group: 'g' });
          expect(proxy.counters.lostReplies).toBe(1);
          // The server holds the job's lock until it hears the silent connection close: then it rolls
          // back, and a claim takes the job. Without the close, the pool's one connection stays with the
          // silent transaction and every claim fails.
          while (jobs.length === 0 && performance.now() - t0 < STATEMENT_TIMEOUT * 5) jobs = await queue.claim({ limit: 5, lease: 60_000, group: 'g' });
          expect(jobs.map((j) => j.id)).toEqual([id]);
          expect(performance.now() - t0).toBeLessThan(STATEMENT_TIMEOUT * 5);
          const [row] = await probe.query<{ attempt: unknown }>(`SELECT attempt FROM \`${prefix}queue_jobs\` WHERE id = ?`, [id]);
          expect(Number(row!.attempt)).toBe(1); // claimed once: the silent transaction was rolled back
        }, 60_000);

        it('a claim whose CALL commits and whose reply is lost on a connection gone silent returns the job it leased, once', async () => {
          const queue = opened.tr.queue<{ n: number }>('called');
          const { id } = await queue.enqueue({ n: 1 });
          const lostBefore = proxy.counters.lostReplies;
          proxy.loseReplies({ count: 1, then: 'silent', match: (sql) => /claim_jobs/.test(sql) });
          const t0 = performance.now();
          const jobs = await queue.claim({ limit: 5, lease: 60_000 });
          expect(proxy.counters.lostReplies - lostBefore).toBe(1);
          // The connection is closed after the statement timeout; the claim finds the job by its token.
          expect(jobs.map((j) => j.id)).toEqual([id]);
          expect(performance.now() - t0).toBeLessThan(STATEMENT_TIMEOUT * 5);
          const [row] = await probe.query<{ attempt: unknown; token: unknown; phase: unknown }>(
            `SELECT attempt, token, phase FROM \`${prefix}queue_jobs\` WHERE id = ?`,
            [id],
          );
          expect([Number(row!.attempt), Number(row!.phase), Number(row!.token)]).toEqual([1, 2, jobs[0]!.token]);
        }, 60_000);
      });
    }
  }
}
