import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { shell, taskrow, BIN } from './run.js';

const target = inject('targets')[0]!;
const prefix = `cli${process.pid}_`;
const env = { TASKROW_URL: target.url };
const common = ['--prefix', prefix];

describe(`taskrow dones against ${target.engine} ${target.version}`, () => {
  let probe: mysql.Connection;
  beforeAll(async () => {
    probe = await mysql.createConnection(target.url);
    const m = await taskrow(['migrate', ...common], { env });
    expect(m.stderr).toBe('');
    expect(m.code).toBe(0);
  });
  afterAll(async () => {
    const [rows] = await probe.query<mysql.RowDataPacket[]>(
      'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
      [`${prefix}%`],
    );
    for (const r of rows) await probe.query(`DROP TABLE \`${r['t']}\``);
    await probe.end();
  });

  const keysInDb = async (ns: string): Promise<string[]> => {
    const [rows] = await probe.query<mysql.RowDataPacket[]>(
      `SELECT COALESCE(d.k_long, d.k) AS k FROM \`${prefix}dones\` d JOIN \`${prefix}dones_ns\` n ON n.gen = d.gen WHERE n.name = ?`,
      [ns],
    );
    return rows.map((r) => Buffer.from(r['k'] as Buffer).toString('utf8')).sort();
  };

  it('marks keys from stdin: CRLF ends lines, blank lines are skipped, other whitespace is kept', async () => {
    const r = await taskrow(['dones', 'mark', 'crlf', ...common], { env, stdin: 'a\r\nb\r\n\r\n\n c\t\r\nd' });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('4 keys, 4 newly marked\n');
    expect(await keysInDb('crlf')).toEqual([' c\t', 'a', 'b', 'd']);
  });

  it('marks and checks keys given as arguments, with --json', async () => {
    expect((await taskrow(['dones', 'mark', 'args', 'x', 'y', ...common], { env })).code).toBe(0);
    const check = await taskrow(['dones', 'check', 'args', 'x', 'z', '--json', ...common], { env });
    expect(check.code).toBe(1); // some pending
    expect(
      check.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { key: 'x', done: true },
      { key: 'z', done: false },
    ]);
    const allDone = await taskrow(['dones', 'check', 'args', 'x', 'y', ...common], { env });
    expect([allDone.code, allDone.stdout]).toEqual([0, 'done\tx\ndone\ty\n']);
    const fromStdin = await taskrow(['dones', 'check', 'args', ...common], { env, stdin: 'y\nw\n' });
    expect([fromStdin.code, fromStdin.stdout]).toEqual([1, 'done\ty\npending\tw\n']);
    const usage = await taskrow(['dones', 'check', ...common], { env });
    expect(usage.code).toBe(2);
    const count = await taskrow(['dones', 'count', 'args', '--json', ...common], { env });
    expect(JSON.parse(count.stdout)).toEqual({ namespace: 'args', count: 2 });
    const un = await taskrow(['dones', 'unmark', 'args', 'x', ...common], { env });
    expect(un.stdout).toBe('1 keys, 1 unmarked\n');
    expect(await keysInDb('args')).toEqual(['y']);
  });

  it('streams the not-done keys of 100,000 candidates to stdout, in input order', async () => {
    const all = Array.from({ length: 100_000 }, (_, i) => `task-${i}`);
    const done = all.filter((_, i) => i % 10 < 7);
    expect((await taskrow(['dones', 'mark', 'big', ...common], { env, stdin: done.join('\n') })).code).toBe(0);
    const r = await taskrow(['dones', 'pending', 'big', ...common], { env, stdin: `${all.join('\r\n')}\r\n` });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').slice(0, -1)).toEqual(all.filter((_, i) => i % 10 >= 7));
  });

  it('exits quietly when the reader of stdout goes away (| head)', async () => {
    const r = await shell(
      `seq 1 300000 | sed 's/^/k-/' | "${process.execPath}" "${BIN}" dones pending pipe --prefix ${prefix} | head -n 3; echo "status=\${PIPESTATUS[2]}" >&2`,
      env,
    );
    expect(r.stdout).toBe('k-1\nk-2\nk-3\n');
    expect(r.stderr).toContain('status=0');
    expect(r.stderr).not.toMatch(/EPIPE|Error/);
  });

  it('clears a namespace and rejects a bad namespace with exit 2 and the rule', async () => {
    expect((await taskrow(['dones', 'clear', 'crlf', ...common], { env })).stdout).toBe('cleared crlf\n');
    expect(await keysInDb('crlf')).toEqual([]);
    const bad = await taskrow(['dones', 'count', 'bad name', ...common], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('INVALID_NAME');
  });
});
