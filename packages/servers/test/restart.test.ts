import mysql from 'mysql2/promise';
import { afterEach, describe, expect, it } from 'vitest';
import { ephemeralRange, freePortBelowEphemeral, installedServers, startServer, type ServerHandle } from '../src/index.js';

const local = installedServers();
const ci = process.env['CI'] === 'true';
const started: ServerHandle[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((h) => h.stop()));
});

async function variables(url: string, names: string[]): Promise<Record<string, string>> {
  const conn = await mysql.createConnection(url);
  try {
    const [rows] = await conn.query<mysql.RowDataPacket[]>(`SHOW GLOBAL VARIABLES WHERE Variable_name IN (${names.map(() => '?').join(',')})`, names);
    return Object.fromEntries(rows.map((r) => [String(r['Variable_name']), String(r['Value'])]));
  } finally {
    await conn.end();
  }
}

describe.runIf(local.length > 0 || ci)('startServer: kill and restart on the same data directory', () => {
  const server = local.find((s) => s.engine === 'mariadb') ?? local[0];

  it('picks a free port below the ephemeral range', async () => {
    const port = await freePortBelowEphemeral();
    expect(port).toBeLessThan(ephemeralRange()[0]);
    expect(port).toBeGreaterThan(1023);
  });

  it('durability full: fsync per commit and doublewrite; kill() then restart() keeps committed rows, port and data dir', async () => {
    expect(server, 'an installed server (run install-servers.sh)').toBeDefined();
    const port = await freePortBelowEphemeral();
    const h = await startServer({ engine: server!.engine, version: server!.version, sources: ['local'], durability: 'full', port });
    started.push(h);
    expect(new URL(h.url).port).toBe(String(port));
    const vars = await variables(h.url, ['innodb_flush_log_at_trx_commit', 'innodb_doublewrite']);
    expect(vars['innodb_flush_log_at_trx_commit']).toBe('1');
    expect(vars['innodb_doublewrite']).toBe('ON');
    const conn = await mysql.createConnection(h.url);
    await conn.query('CREATE TABLE restart_probe (id INT PRIMARY KEY) ENGINE=InnoDB');
    await conn.query('INSERT INTO restart_probe VALUES (1), (2), (3)');
    const firstPid = h.pid!;
    await h.kill!();
    expect(() => process.kill(firstPid, 0)).toThrow();
    await expect(conn.query('SELECT 1')).rejects.toThrow();
    conn.destroy();
    await h.restart!();
    expect(h.pid).not.toBe(firstPid);
    const again = await mysql.createConnection(h.url);
    try {
      const [rows] = await again.query<mysql.RowDataPacket[]>('SELECT COUNT(*) AS n FROM restart_probe');
      expect(Number(rows[0]!['n'])).toBe(3);
    } finally {
      await again.end();
    }
    await h.stop();
    await expect(h.restart!()).rejects.toThrow(/stopped/);
  }, 240_000);
});
