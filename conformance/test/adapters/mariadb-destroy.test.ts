import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mariadb, { type Pool } from 'mariadb';
import { mariadbClient } from '@taskrow/mariadb';
import type { SqlClient } from '@taskrow/core';
import { startProxy, type Proxy } from '../../chaos/proxy.js';
import { mariadbConfig } from '../../src/harnesses/mariadb.js';
import { mysql2Probe } from '../../src/harnesses/mysql2.js';
import { until } from '../../src/setup.js';
import { label, targets } from '../../src/targets.js';

// The `mariadb` driver's own destroy() of a connection with a statement in flight opens a second
// connection to KILL the first one's thread, and leaves that KILL's failure unhandled. When the
// server already ended the thread (its session gone, the client's path silent), the KILL fails
// with "Unknown thread id" and the rejection ends a Node process. The adapter MUST give up such a
// connection without the driver's KILL: the statement fails as a lost connection, nothing goes
// unhandled, and the pool's slot comes back. taskrow's own KILL CONNECTION of the abandoned session
// (sent over a connection of the pool once the slot is back, see core's `killingAbandoned`) fails
// here the same way, and is handled.
const SLEEP = 'SELECT SLEEP(60) AS taskrow_destroy_case';

for (const target of targets()) {
  describe(`${label(target)} · mariadb · a pooled connection abandoned after the server ended its session`, () => {
    // Its own set-up: the `mariadb` driver's pool through a proxy, and no taskrow tables to migrate.
    let probe: Awaited<ReturnType<typeof mysql2Probe>>;
    let proxy: Proxy;
    let pool: Pool;
    let client: SqlClient;
    const sent: string[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

    beforeAll(async () => {
      probe = await mysql2Probe(target.url);
      const u = new URL(target.url);
      proxy = await startProxy({ host: u.hostname, port: Number(u.port) });
      // Every statement the driver sends through the proxy, in order (none of them loses its reply).
      proxy.loseReplies({
        then: 'close',
        match: (sql) => {
          sent.push(sql);
          return false;
        },
      });
      pool = mariadb.createPool(`${mariadbConfig({ url: proxy.url(target.url) })}&connectionLimit=1&minimumIdle=1`);
      client = mariadbClient(pool);
      process.on('unhandledRejection', onUnhandled);
    });

    afterAll(async () => {
      process.off('unhandledRejection', onUnhandled);
      await pool?.end().catch(() => undefined);
      await proxy?.close();
      await probe?.end();
    });

    it("fails the statement as a lost connection, sends no KILL of the driver's, leaves no rejection unhandled, and lends the slot again", async () => {
      expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect(proxy.connections).toHaveLength(1);
      const abandon = new AbortController();
      const outcome = client.query(SLEEP, [], { signal: abandon.signal }).then(
        () => 'answered',
        (err: unknown) => err,
      );
      let thread: number | undefined;
      await until(
        'the statement reached the server',
        async () => {
          const [row] = await probe.query<{ id: unknown }>('SELECT id FROM information_schema.processlist WHERE info = ?', [SLEEP]);
          thread = row === undefined ? undefined : Number(row.id);
          return thread !== undefined;
        },
        10,
      );
      expect(thread, 'the statement reached the server').toBeTypeOf('number');
      // The server ends the session; the client's path hears nothing of it, ever.
      proxy.connections[0]!.setMode('blackhole');
      await probe.query(`KILL CONNECTION ${thread}`);
      abandon.abort(); // the engine stops waiting: the adapter gives the connection up

      const err = await outcome;
      expect(err, 'the abandoned statement fails').toBeInstanceOf(Error);
      expect(client.describeError(err).lost, 'as a lost connection').toBe(true);
      expect((await client.query<{ one: number }>('SELECT 2 AS one')).rows).toEqual([{ one: 2 }]);
      // The driver's KILL is a plain `KILL <id>`; taskrow's own, sent over the pool's connection once
      // the slot is back (and only if the statement was still in flight then), is `KILL CONNECTION`.
      expect(
        sent.filter((sql) => /^\s*kill\s+\d/i.test(sql)),
        "the driver's KILL statements",
      ).toEqual([]);
      expect(unhandled, 'unhandled rejections').toEqual([]);
    });
  });
}
