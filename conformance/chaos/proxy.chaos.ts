import mysql from 'mysql2/promise';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ServerTarget } from '@taskrow/servers';
import { label } from '../src/targets.js';
import { startProxy, type Proxy } from './proxy.js';
import { answersWithin, chaosTargets } from './lib.js';

// The fault proxy itself, against every server (MySQL 8.0.23+ prefixes COM_QUERY's text with query
// attribute counts): each mode does what the scenarios rely on.
const table = `chaos_proxy_${process.pid}`;
const opened: { end(): unknown }[] = [];
let proxy: Proxy | undefined;
let target: ServerTarget;

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  for (const c of opened.splice(0)) (c as mysql.Connection).destroy();
});

const upstream = (): { host: string; port: number } => ({ host: '127.0.0.1', port: Number(new URL(target.url).port) });

async function direct(): Promise<mysql.Connection> {
  const c = await mysql.createConnection(target.url);
  opened.push(c);
  return c;
}

async function through(p: Proxy): Promise<mysql.Connection> {
  const c = await mysql.createConnection(p.url(target.url));
  c.on('error', () => undefined);
  opened.push(c);
  return c;
}

async function rows(c: mysql.Connection, sql: string, params: unknown[] = []): Promise<mysql.RowDataPacket[]> {
  return (await c.query<mysql.RowDataPacket[]>(sql, params))[0];
}

/** BEGIN, INSERT `id`, COMMIT on a fresh connection through the proxy; resolves to how it ended. */
async function commitThrough(p: Proxy, id: number, waitMs = 1500): Promise<'ok' | 'lost' | 'silent'> {
  const c = await through(p);
  await c.beginTransaction();
  await c.query(`INSERT INTO ${table} VALUES (?)`, [id]);
  const res = await answersWithin(
    c.commit().then(
      () => 'ok' as const,
      () => 'lost' as const,
    ),
    waitMs,
  );
  return res ?? 'silent';
}

for (const t of chaosTargets())
  describe(`${label(t)} · chaos proxy`, () => {
    beforeAll(() => {
      target = t;
    });

    it('forwards, and blackholes both ways without closing either socket', async () => {
      const probe = await direct();
      await probe.query(`CREATE TABLE IF NOT EXISTS ${table} (id INT PRIMARY KEY) ENGINE=InnoDB`);
      proxy = await startProxy(upstream());
      const c = await through(proxy);
      const [[me]] = await c.query<mysql.RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
      let closed = false;
      c.on('end', () => (closed = true));
      proxy.setMode('blackhole');
      expect(await answersWithin(c.query('SELECT 1'), 1500)).toBeUndefined();
      expect(closed).toBe(false);
      expect(proxy.connections).toHaveLength(1);
      // The server still has the connection: nothing told it the client is gone.
      const alive = await rows(probe, 'SELECT id FROM information_schema.processlist WHERE id = ?', [me!['id']]);
      expect(alive).toHaveLength(1);
      expect(proxy.counters.blackholedBytes).toBeGreaterThan(0);
      // New connections are blackholed too: the handshake never arrives.
      await expect(answersWithin(mysql.createConnection({ uri: proxy.url(target.url), connectTimeout: 1000 }), 3000)).rejects.toThrow(/timed? ?out/i);
    });

    it('refuses new connections while open ones go on', async () => {
      proxy = await startProxy(upstream());
      const c = await through(proxy);
      proxy.refuse(true);
      await expect(mysql.createConnection(proxy.url(target.url))).rejects.toThrow();
      expect(proxy.counters.refused).toBe(1);
      expect(await rows(c, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
      proxy.refuse(false);
      expect(await rows(await through(proxy), 'SELECT 2 AS two')).toEqual([{ two: 2 }]);
    });

    it('loses the reply of the next N COMMITs (close), after the server committed', async () => {
      const probe = await direct();
      await probe.query(`DELETE FROM ${table}`);
      proxy = await startProxy(upstream());
      proxy.loseReplies({ count: 2, then: 'close' });
      expect(await commitThrough(proxy, 1)).toBe('lost');
      expect(await commitThrough(proxy, 2)).toBe('lost');
      expect(await commitThrough(proxy, 3)).toBe('ok');
      expect((await rows(probe, `SELECT id FROM ${table} ORDER BY id`)).map((r) => r['id'])).toEqual([1, 2, 3]);
      expect(proxy.counters).toMatchObject({ commits: 3, lostReplies: 2 });
    });

    it('loses the reply of every k-th COMMIT (silent: the client hears nothing more)', async () => {
      const probe = await direct();
      await probe.query(`DELETE FROM ${table}`);
      proxy = await startProxy(upstream());
      proxy.loseReplies({ every: 2, then: 'silent' });
      const outcomes = [];
      for (let i = 1; i <= 4; i++) outcomes.push(await commitThrough(proxy, i));
      expect(outcomes).toEqual(['ok', 'silent', 'ok', 'silent']);
      expect((await rows(probe, `SELECT id FROM ${table} ORDER BY id`)).map((r) => r['id'])).toEqual([1, 2, 3, 4]);
      expect(proxy.counters).toMatchObject({ commits: 4, lostReplies: 2 });
    });

    it('loses only COMMITs of transactions that ran a matching statement', async () => {
      const probe = await direct();
      await probe.query(`DELETE FROM ${table}`);
      proxy = await startProxy(upstream());
      proxy.loseReplies({ count: 1, then: 'close', within: /VALUES \(2\)/ });
      const c = await through(proxy);
      await c.beginTransaction();
      await c.query(`INSERT INTO ${table} VALUES (1)`);
      await c.commit();
      await c.beginTransaction();
      await c.query(`INSERT INTO ${table} VALUES (2)`);
      await expect(c.commit()).rejects.toThrow();
      expect(proxy.counters).toMatchObject({ commits: 2, lostReplies: 1 });
      await probe.query(`DROP TABLE ${table}`);
    });
  });
