import { spawn } from 'node:child_process';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BIN, taskrow } from './run.js';

const target = inject('targets')[0]!;
const prefix = `cld${process.pid}_`;

/** Starts `taskrow dashboard`, resolving once it printed its address. */
function start(args: string[], env: Record<string, string>): Promise<{ url: string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'dashboard', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /at (http:\/\/\S+\/)/.exec(stdout);
      if (m) resolve({ url: m[1]!, stop: () => new Promise((done) => (child.once('close', done), child.kill('SIGTERM'))) });
    });
    child.once('close', (code) => reject(new Error(`taskrow dashboard exited ${code}: ${stderr}`)));
  });
}

describe(`taskrow dashboard against ${target.engine} ${target.version}`, () => {
  let probe: mysql.Connection;
  beforeAll(async () => {
    probe = await mysql.createConnection(target.url);
    expect((await taskrow(['migrate', '--prefix', prefix], { env: { TASKROW_URL: target.url } })).code).toBe(0);
    expect((await taskrow(['queue', 'enqueue', 'cliq', '--prefix', prefix], { env: { TASKROW_URL: target.url }, stdin: '{"a":1}\n{"a":2}\n' })).code).toBe(0);
  });
  afterAll(async () => {
    const [rows] = await probe.query<mysql.RowDataPacket[]>(
      'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
      [`${prefix}%`],
    );
    for (const r of rows) await probe.query(`DROP TABLE \`${r['t']}\``);
    await probe.end();
  });

  it('serves the pages and /metrics on 127.0.0.1, without actions unless given a token, and stops on SIGTERM', async () => {
    const d = await start(['--port', '0', '--prefix', prefix], { TASKROW_URL: target.url, TASKROW_DASHBOARD_TOKEN: '' });
    try {
      expect(new URL(d.url).hostname).toBe('127.0.0.1');
      const page = await (await fetch(`${d.url}queues/cliq`)).text();
      expect(page).toContain('Queue cliq');
      expect(page).not.toContain('Enable actions');
      expect(await (await fetch(`${d.url}metrics`)).text()).toContain('taskrow_queue_jobs{queue="cliq",state="ready"} 2');
    } finally {
      expect(await d.stop()).toBe(0);
    }
    const withToken = await start(['--port', '0', '--prefix', prefix, '--actions-token', 'cli-token-0123456789abcdef'], { TASKROW_URL: target.url });
    try {
      expect(await (await fetch(withToken.url)).text()).toContain('Enable actions');
    } finally {
      await withToken.stop();
    }
  });

  it('rejects a bad port as a usage error', async () => {
    const r = await taskrow(['dashboard', '--port', '70000'], { env: { TASKROW_URL: target.url } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--port must be a whole number from 0 to 65535');
  });
});
