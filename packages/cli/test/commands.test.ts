import { existsSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { taskrow as taskrowOf } from '@taskrow/mysql2';
import { BIN, shell, taskrow } from './run.js';

const target = inject('targets')[0]!;
const prefix = `clc${process.pid}_`;
const env = { TASKROW_URL: target.url };
const common = ['--prefix', prefix];

/** Whether a process `pid` runs (signal 0 checks without sending). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe(`taskrow loop, queue, resources and demo against ${target.engine} ${target.version}`, () => {
  let probe: mysql.Connection;
  beforeAll(async () => {
    probe = await mysql.createConnection(target.url);
    expect((await taskrow(['migrate', ...common], { env })).code).toBe(0);
  });
  afterAll(async () => {
    const [rows] = await probe.query<mysql.RowDataPacket[]>(
      'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND (table_name LIKE ? OR table_name LIKE ?)',
      [`${prefix}%`, `${prefix}demo%`],
    );
    for (const r of rows) await probe.query(`DROP TABLE \`${r['t']}\``);
    await probe.end();
  });

  it('creates a loop, adds ids from stdin, leases them with get and reports them with did', async () => {
    expect((await taskrow(['loop', 'create', 'pages', '--id-type', 'int', ...common], { env })).code).toBe(0);
    const add = await taskrow(['loop', 'add', 'pages', ...common], { env, stdin: '1\n2\n3\n4\n5\n' });
    expect(add.stdout).toBe('5\n');
    const got = await taskrow(['loop', 'get', 'pages', '--limit', '3', '--json', ...common], { env });
    const ids = JSON.parse(got.stdout) as number[];
    expect(ids).toHaveLength(3);
    const [locked] = await probe.query<mysql.RowDataPacket[]>(`SELECT id FROM \`${prefix}loop_pages\` WHERE lock_until IS NOT NULL ORDER BY id`);
    expect(locked.map((r) => r['id'])).toEqual([...ids].sort((a, b) => a - b));
    const didAt = Date.now();
    const did = await taskrow(['loop', 'did', 'pages', ...ids.map(String), ...common], { env });
    expect(did.stdout).toBe('3\n');
    const stats = JSON.parse((await taskrow(['loop', 'stats', 'pages', '--json', ...common], { env })).stdout) as Record<string, unknown>;
    expect(stats['locked']).toBe(0);
    expect(stats['minId']).toBe(1);
    expect(stats['maxId']).toBe(5);
    const dry = await taskrow(['loop', 'remove', 'pages', '1', '2', '--dry-run', ...common], { env });
    expect(dry.stdout).toBe('2\n');
    const [count] = await probe.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${prefix}loop_pages\``);
    expect(Number(count[0]!['n'])).toBe(5);
    // Durations: --lock-for takes a unit; check prints milliseconds (the loop keeps whole seconds).
    const getAt = Date.now();
    const [next] = JSON.parse((await taskrow(['loop', 'get', 'pages', '--limit', '1', '--lock-for', '2m', '--json', ...common], { env })).stdout) as number[];
    const checked = await taskrow(['loop', 'check', 'pages', String(next), String(ids[0]), ...common], { env });
    const checkedAt = Date.now();
    const byId = new Map(
      checked.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split('\t'))
        .map(([id, since, locked]) => [Number(id), { since, locked }]),
    );
    expect(byId.get(next!)!.since).toBe('');
    // Whole seconds of the database clock: within a second of what the commands' own time allows.
    expect(Number(byId.get(next!)!.locked)).toBeGreaterThanOrEqual(120_000 - (checkedAt - getAt) - 1000);
    expect(Number(byId.get(next!)!.locked)).toBeLessThanOrEqual(120_000);
    expect(Number(byId.get(next!)!.locked) % 1000).toBe(0);
    expect(Number(byId.get(ids[0]!)!.since)).toBeLessThanOrEqual(checkedAt - didAt + 1000);
    expect(byId.get(ids[0]!)!.locked).toBe('');
    const badLock = await taskrow(['loop', 'get', 'pages', '--limit', '1', '--lock-for', '5x', ...common], { env });
    expect([badLock.code, badLock.stderr.split('\n')[0]]).toEqual([2, expect.stringContaining('--lock-for must be a duration from')]);
    const bad = await taskrow(['loop', 'add', 'pages', 'x1', ...common], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"x1" is not an integer');
  });

  it('enqueues JSON payloads from stdin, shows stats, and rejects a payload that is not JSON', async () => {
    const q = await taskrow(['queue', 'enqueue', 'mail', ...common], { env, stdin: '{"to":"a"}\n{"to":"b"}\n[1,2]\n' });
    expect(q.code).toBe(0);
    expect(q.stdout).toBe('3 enqueued\n');
    const stats = JSON.parse((await taskrow(['queue', 'stats', 'mail', '--json', ...common], { env })).stdout) as { counts: Record<string, number> };
    const total = Object.values(stats.counts).reduce((a, b) => a + b, 0);
    expect(total).toBe(3);
    expect((await taskrow(['queue', 'pause', 'mail', ...common], { env })).stdout).toBe('mail\tpaused\n');
    expect((await taskrow(['queue', 'stats', 'mail', ...common], { env })).stdout).toMatch(/^paused_at\t\d{4}-\d\d-\d\dT/m);
    expect((await taskrow(['queue', 'resume', 'mail', '--json', ...common], { env })).stdout).toBe('{"queue":"mail","paused":false}\n');
    expect((await taskrow(['queue', 'stats', 'mail', ...common], { env })).stdout).toMatch(/^paused_at\t-$/m);
    const bad = await taskrow(['queue', 'enqueue', 'mail', '{nope', ...common], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('payload #0 is not JSON');
    const dedup = await taskrow(['queue', 'enqueue', 'mail', '{"x":1}', '--dedup-key', 'once', ...common], { env });
    const again = await taskrow(['queue', 'enqueue', 'mail', '{"x":1}', '--dedup-key', 'once', ...common], { env });
    expect(dedup.stdout).toBe('1 enqueued\n');
    expect(again.stdout).toBe('0 enqueued, 1 already queued\n');
  });

  it('enqueues jobs under a concurrency key, and purge-keys deletes the rows of keys with no job and no limit of their own', async () => {
    const run = (args: string[]) => taskrow([...args, ...common], { env });
    expect((await run(['queue', 'enqueue', 'keyed', '{"n":1}', '--concurrency-key', 'alpha'])).stdout).toBe('1 enqueued\n');
    expect((await run(['queue', 'enqueue', 'keyed', '{"n":2}', '--concurrency-key', 'beta'])).stdout).toBe('1 enqueued\n');
    const pool = mysql.createPool({ uri: target.url, connectionLimit: 4 });
    try {
      const tr = await taskrowOf(pool, { prefix });
      const q = tr.queue<{ n: number }>('keyed');
      const ran: number[] = [];
      const worker = q.work((job) => void ran.push(job.payload.n), { pollInterval: 50 });
      for (const t0 = Date.now(); ran.length < 2 && Date.now() - t0 < 30_000; ) await new Promise((r) => setTimeout(r, 20));
      await worker.stop();
      expect(ran.sort()).toEqual([1, 2]);
      await q.setConcurrencyLimit(3, { key: 'beta' }); // beta keeps its row: it holds a limit of its own
      await tr.close();
    } finally {
      await pool.end();
    }
    const keysOf = async (): Promise<string[]> =>
      (
        await probe.query<mysql.RowDataPacket[]>(`SELECT conc_key AS k FROM \`${prefix}queue_keys\` WHERE queue = 'keyed' AND conc_key <> '' ORDER BY conc_key`)
      )[0].map((r) => String(r['k']));
    expect(await keysOf()).toEqual(['alpha', 'beta']);
    expect((await run(['queue', 'purge-keys', 'keyed', '--json'])).stdout).toBe('{"queue":"keyed","purged":1}\n');
    expect(await keysOf()).toEqual(['beta']);
    expect((await run(['queue', 'purge-keys', 'keyed'])).stdout).toBe('0\n');
  });

  it('adds, lists and removes recurring schedules; bad input is refused and changes nothing', async () => {
    const add = await taskrow(
      [
        'schedule',
        'add',
        'nightly',
        '--queue',
        'reports',
        '--cron',
        '0 30 2 * * *',
        '--tz',
        'Europe/Berlin',
        '--missed',
        'each:3',
        '--priority',
        '2',
        '{"r":1}',
        ...common,
      ],
      { env },
    );
    expect([add.code, add.stderr]).toEqual([0, '']);
    const fields = add.stdout.trimEnd().split('\t');
    expect(fields.slice(0, 4)).toEqual(['nightly', 'reports', 'cron 0 30 2 * * * Europe/Berlin', 'each:3']);
    expect(new Date(fields[4]!).getUTCMinutes()).toBe(30);
    expect(fields.slice(5)).toEqual(['-', '{"r":1}']);
    const [[row]] = await probe.query<mysql.RowDataPacket[]>(
      `SELECT queue, options, missed, missed_max FROM \`${prefix}queue_schedules\` WHERE name = 'nightly'`,
    );
    expect([row!['queue'], JSON.parse(String(row!['options'])), row!['missed'], Number(row!['missed_max'])]).toEqual(['reports', { priority: 2 }, 'each', 3]);
    const beat = JSON.parse((await taskrow(['schedule', 'add', 'beat', '--queue', 'pulse', '--every', '60s', '--json', ...common], { env })).stdout) as Record<
      string,
      unknown
    >;
    expect(beat).toMatchObject({ name: 'beat', queue: 'pulse', every: 60_000, cron: null, missed: 'once', payload: null });
    const list = await taskrow(['schedule', 'list', ...common], { env });
    expect(
      list.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split('\t').slice(0, 4)),
    ).toEqual([
      ['beat', 'pulse', 'every 60s', 'once'],
      ['nightly', 'reports', 'cron 0 30 2 * * * Europe/Berlin', 'each:3'],
    ]);
    const tz = await taskrow(['schedule', 'add', 'beat', '--queue', 'pulse', '--every', '5s', '--tz', 'UTC', ...common], { env });
    expect([tz.code, tz.stderr]).toEqual([2, 'taskrow: schedule add tz applies to cron patterns only, got tz "UTC" with every [INVALID_ARGUMENT]\n']);
    const cron = await taskrow(['schedule', 'add', 'beat', '--queue', 'pulse', '--cron', '61 * * * *', ...common], { env });
    expect([cron.code, cron.stderr]).toEqual([2, expect.stringContaining('"61 * * * *" is not a cron pattern of 5 or 6 fields')]);
    const usage = await Promise.all([
      taskrow(['schedule', 'add', 'beat', '--every', '5s', ...common], { env }),
      taskrow(['schedule', 'add', 'beat', '--queue', 'pulse', '--every', '5s', '--missed', 'sometimes', ...common], { env }),
      taskrow(['schedule', 'add', 'beat', '--queue', 'pulse', '--every', '5s', '{nope', ...common], { env }),
    ]);
    expect(usage.map((r) => [r.code, r.stderr.split('\n')[0]])).toEqual([
      [2, 'taskrow: schedule add needs --queue QUEUE'],
      [2, 'taskrow: --missed must be skip, once or each:N, got "sometimes"'],
      [2, 'taskrow: payload is not JSON: {nope'],
    ]);
    const listed = JSON.parse((await taskrow(['schedule', 'list', '--json', ...common], { env })).stdout) as { name: string; every: number | null }[];
    expect(listed.map((x) => [x.name, x.every])).toEqual([
      ['beat', 60_000],
      ['nightly', null],
    ]);
    const [[count]] = await probe.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n, SUM(every_s) AS every FROM \`${prefix}queue_schedules\``);
    expect([Number(count!['n']), Number(count!['every'])]).toEqual([2, 60]);
    expect((await taskrow(['schedule', 'remove', 'nightly', ...common], { env })).stdout).toBe('nightly\tremoved\n');
    const again = await taskrow(['schedule', 'remove', 'nightly', ...common], { env });
    expect([again.code, again.stderr]).toEqual([1, 'taskrow: there is no schedule "nightly" [NOT_FOUND]\n']);
    expect((await taskrow(['schedule', 'remove', 'beat', ...common], { env })).code).toBe(0);
  });

  it('lists a queue page by page, in claim order, filtered by state, as text or JSON', async () => {
    const stdin = [5, 1, 3, 2, 4].map((p) => JSON.stringify({ p })).join('\n');
    expect((await taskrow(['queue', 'enqueue', 'reports', ...common], { env, stdin: `${stdin}\n` })).code).toBe(0);
    expect((await taskrow(['queue', 'enqueue', 'reports', '{"p":0}', '--priority=-1', ...common], { env })).code).toBe(0);
    expect((await taskrow(['queue', 'enqueue', 'reports', '{"p":9}', '--delay', '10m', '--group', 'night', ...common], { env })).code).toBe(0);
    const [rows] = await probe.query<mysql.RowDataPacket[]>(
      `SELECT id, phase FROM \`${prefix}queue_jobs\` WHERE queue = 'reports' ORDER BY phase, ready_priority, due_at, grp, id`,
    );
    const first = await taskrow(['queue', 'list', 'reports', '--limit', '4', ...common], { env });
    expect(first.code).toBe(0);
    const lines = first.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(lines.map((l) => Number(l[0]))).toEqual(rows.slice(0, 4).map((r) => Number(r['id'])));
    expect(lines[0]!.slice(1, 5)).toEqual(['ready', '0/5', '-1', '-']);
    expect(JSON.parse(lines[0]![6]!)).toEqual({ p: 0 });
    expect(lines.slice(1).map((l) => JSON.parse(l[6]!).p)).toEqual([5, 1, 3]);
    const after = /^more: --after (\S+)$/m.exec(first.stderr)?.[1];
    expect(after).toBeDefined();
    const rest = JSON.parse((await taskrow(['queue', 'list', 'reports', '--after', after!, '--json', ...common], { env })).stdout) as {
      jobs: { id: number; state: string; group: string | null; payload: { p: number } }[];
      next: string | null;
    };
    expect(rest.next).toBeNull();
    expect(rest.jobs.map((j) => j.id)).toEqual(rows.slice(4).map((r) => Number(r['id'])));
    expect(rest.jobs.map((j) => [j.payload.p, j.state, j.group])).toEqual([
      [2, 'ready', null],
      [4, 'ready', null],
      [9, 'delayed', 'night'],
    ]);
    const delayed = await taskrow(['queue', 'list', 'reports', '--state', 'delayed,dead', ...common], { env });
    expect(
      delayed.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.split('\t').slice(1, 5)),
    ).toEqual([['delayed', '0/5', '0', 'night']]);
    expect(delayed.stderr).toBe('');
    const bad = await taskrow(['queue', 'list', 'reports', '--state', 'waiting', ...common], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--state must be a comma-separated list of ready, delayed, running, done, dead, blocked, got "waiting"');
    const cursor = await taskrow(['queue', 'list', 'reports', '--after', 'xyz', ...common], { env });
    expect(cursor.code).toBe(2); // a bad value, though the library is what refused it
    expect(cursor.stderr).toContain('--after must be the cursor an earlier page printed as next');
    expect(cursor.stderr).toContain('INVALID_ARGUMENT');
  });

  it('shows one job with its last error, and says when there is none', async () => {
    expect((await taskrow(['queue', 'enqueue', 'flaky', '{"n":1}', '--max-attempts', '1', ...common], { env })).code).toBe(0);
    const [[row]] = await probe.query<mysql.RowDataPacket[]>(`SELECT id FROM \`${prefix}queue_jobs\` WHERE queue = 'flaky'`);
    const id = Number(row!['id']);
    await probe.query(`UPDATE \`${prefix}queue_jobs\` SET phase = 4, attempt = 1, progress = '{"pct":40}', last_error = ? WHERE id = ?`, [
      'Error: boom\n    at step (a.js:1:1)',
      id,
    ]);
    const shown = await taskrow(['queue', 'show', 'flaky', String(id), ...common], { env });
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split('\n');
    expect(lines.slice(0, 7)).toEqual([`id\t${id}`, 'queue\tflaky', 'state\tdead', 'attempt\t1', 'max_attempts\t1', 'priority\t0', 'group\t-']);
    expect(lines).toContain('payload\t{"n":1}');
    expect(lines).toContain('progress\t{"pct":40}');
    expect(lines).toContain('result\tnull');
    expect(shown.stdout.endsWith('last_error\tError: boom\n    at step (a.js:1:1)\n')).toBe(true);
    const json = JSON.parse((await taskrow(['queue', 'show', 'flaky', String(id), '--json', ...common], { env })).stdout) as Record<string, unknown>;
    expect([json['id'], json['state'], json['lastError']]).toEqual([id, 'dead', 'Error: boom\n    at step (a.js:1:1)']);
    const missing = await taskrow(['queue', 'show', 'other', String(id), ...common], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`queue "other" has no job ${id}`);
    expect(missing.stderr).toContain('NOT_FOUND');
    const bad = await taskrow(['queue', 'show', 'flaky', '12x', ...common], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('job ID must be a whole number from 1, got "12x"');
  });

  it('removes jobs that have not started by id, prints how many, and refuses a bad id with exit 2', async () => {
    expect((await taskrow(['queue', 'enqueue', 'rm', '1', '2', '3', ...common], { env })).code).toBe(0);
    const ids = async (): Promise<number[]> =>
      (await probe.query<mysql.RowDataPacket[]>(`SELECT id FROM \`${prefix}queue_jobs\` WHERE queue = 'rm' ORDER BY id`))[0].map((r) => Number(r['id']));
    const [a, b, c] = await ids();
    const removed = await taskrow(['queue', 'remove', 'rm', String(a), String(c), '999999999', ...common], { env });
    expect([removed.code, removed.stdout]).toEqual([0, '2\n']);
    expect(await ids()).toEqual([b]);
    await probe.query(`UPDATE \`${prefix}queue_jobs\` SET phase = 1, due_at = UTC_TIMESTAMP(6) + INTERVAL 1 HOUR WHERE id = ?`, [b]);
    const promoted = await taskrow(['queue', 'promote', 'rm', String(b), String(a), ...common], { env });
    expect([promoted.code, promoted.stdout]).toEqual([0, '1\n']);
    const json = await taskrow(['queue', 'remove', 'rm', String(b), '--json', ...common], { env });
    expect(JSON.parse(json.stdout)).toEqual({ queue: 'rm', removed: 1 });
    for (const args of [['x1'], []]) {
      const bad = await taskrow(['queue', 'remove', 'rm', ...args, ...common], { env });
      expect(bad.code).toBe(2);
    }
  });

  it('purges dead jobs by age and count from the command line, and refuses a bad flag with exit 2', async () => {
    expect((await taskrow(['queue', 'enqueue', 'old', '1', '2', '3', ...common], { env })).code).toBe(0);
    await probe.query(
      `UPDATE \`${prefix}queue_jobs\` SET phase = 4, attempt = 1, due_at = UTC_TIMESTAMP(6) - INTERVAL 2 HOUR WHERE queue = 'old' ORDER BY id LIMIT 1`,
    );
    await probe.query(`UPDATE \`${prefix}queue_jobs\` SET phase = 4, attempt = 1, due_at = UTC_TIMESTAMP(6) WHERE queue = 'old' AND phase = 0`);
    const dead = async (): Promise<number> =>
      Number((await probe.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${prefix}queue_jobs\` WHERE queue = 'old' AND phase = 4`))[0][0]!['n']);
    expect(await dead()).toBe(3);
    const byAge = await taskrow(['queue', 'purge', 'old', '--keep-dead-for', '1h', ...common], { env });
    expect([byAge.code, byAge.stdout, await dead()]).toEqual([0, '1\n', 2]);
    const byCount = await taskrow(['queue', 'purge', 'old', '--keep-dead-count', '1', '--json', ...common], { env });
    expect([byCount.code, JSON.parse(byCount.stdout), await dead()]).toEqual([0, { queue: 'old', purged: 1 }, 1]);
    const bad = await taskrow(['queue', 'purge', 'old', '--keep-dead-for', '5x', ...common], { env });
    expect([bad.code, await dead()]).toEqual([2, 1]);
    expect(bad.stderr).toContain('--keep-dead-for must be a duration');
  });

  it('produces outputs by hand and shows them in resources commands', async () => {
    const p = await taskrow(['resources', 'produce', 'raw.2026-11-22', ...common], { env });
    expect(p.code).toBe(0);
    expect(p.stdout).toBe('1\n');
    const show = await taskrow(['resources', 'show', '--json', ...common], { env });
    expect(JSON.parse(show.stdout)).toEqual([]);
  });

  it('runs the demo on a given server: every job once, exactly 30% of the tasks pending', async () => {
    const demoPrefix = `${prefix}demo_`;
    const r = await taskrow(['demo', '--jobs', '3000', '--tasks', '10000', '--ids', '1000', '--prefix', demoPrefix], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('3,000 jobs produced and consumed concurrently');
    expect(r.stdout).toContain('each exactly once; 0 left in the table');
    expect(r.stdout).toContain('3,000 to resubmit');
    expect(r.stdout).toMatch(/loop: 1,000 ids leased, updated and reported .* each once; 0 still locked/);
    const [marked] = await probe.query<mysql.RowDataPacket[]>(
      `SELECT COUNT(*) AS n FROM \`${demoPrefix}dones\` d JOIN \`${demoPrefix}dones_ns\` n ON n.gen = d.gen WHERE n.name = 'demo-run'`,
    );
    expect(Number(marked[0]!['n'])).toBe(7000);
  });

  it('names CLI commands, not library calls, in messages from core', async () => {
    const missing = await taskrow(['loop', 'stats', 'nosuchloop', ...common], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('create it with taskrow loop create nosuchloop');
    expect(missing.stderr).toContain('[NOT_FOUND]');
    expect(missing.stderr).not.toContain('createLoop(');
    const unmigrated = await taskrow(['dones', 'count', 'ns', '--prefix', `${prefix}none_`], { env });
    expect(unmigrated.code).toBe(1);
    expect(unmigrated.stderr).toContain('run taskrow migrate first (or apply the DDL that taskrow schema prints)');
    expect(unmigrated.stderr).toContain('[SCHEMA_MISSING]');
    expect(unmigrated.stderr).not.toContain('migrate()');
  });

  it('names the flag a library check refused, with exit 2, and changes nothing', async () => {
    const group = await taskrow(['queue', 'enqueue', 'strict', '{}', '--group', 'no spaces', ...common], { env });
    expect([group.code, group.stderr]).toEqual([2, expect.stringMatching(/^taskrow: invalid --group "no spaces": use 1 to 64 characters/)]);
    const key = await taskrow(['queue', 'enqueue', 'strict', '{}', '--concurrency-key', 'k'.repeat(300), ...common], { env });
    expect([key.code, key.stderr]).toEqual([2, expect.stringMatching(/^taskrow: --concurrency-key must be a non-empty string of at most \d+ characters/)]);
    const [[row]] = await probe.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${prefix}queue_jobs\` WHERE queue = 'strict'`);
    expect(Number(row!['n'])).toBe(0);
  });

  it('schedule add takes the enqueue flags, --concurrency-key included', async () => {
    const add = await taskrow(
      ['schedule', 'add', 'keyed-tick', '--queue', 'keyed-ticks', '--every', '1h', '--concurrency-key', 'tenant-1', '--json', ...common],
      {
        env,
      },
    );
    expect(add.code).toBe(0);
    expect((JSON.parse(add.stdout) as { options: Record<string, unknown> }).options).toEqual({ concurrencyKey: 'tenant-1' });
    expect((await taskrow(['schedule', 'remove', 'keyed-tick', ...common], { env })).code).toBe(0);
  });

  it('tells a wrong password and a missing database from an unreachable server, password hidden', async () => {
    const url = new URL(target.url);
    url.password = 'certainly-wrong';
    const auth = await taskrow(['dones', 'count', 'ns', '--url', url.toString()]);
    expect(auth.code).toBe(1);
    expect(auth.stderr).toContain(`authentication failed at mysql://${url.username}:***@`);
    expect(auth.stderr).not.toContain('certainly-wrong');
    const db = new URL(target.url);
    db.pathname = '/no_such_database_here';
    const missing = await taskrow(['dones', 'count', 'ns', '--url', db.toString()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('database "no_such_database_here" does not exist');
  });

  it('says so on stderr when it waits for standard input on a terminal', async () => {
    // script(1) gives the command a terminal; the keys and an end-of-file (Ctrl-D) are typed into it.
    const cmd = ['node', BIN, 'dones', 'mark', 'typed', '--url', target.url, ...common].map((a) => `'${a}'`).join(' ');
    const r = await shell(`{ sleep 2; printf 'k1\\nk2\\n\\004'; } | script -qec ${JSON.stringify(cmd)} /dev/null`);
    expect(r.stdout).toContain('taskrow: reading keys from standard input, one per line; end with Ctrl-D');
    expect(r.stdout).toContain('2 keys, 2 newly marked');
  });

  it('--embedded starts a local server, says so, and stops it before exiting', async () => {
    // A server named by TASKROW_MARIADB_URL (as the kit's runs set) is not the one --embedded starts.
    const named = inject('targets').find((t) => t.engine === 'mariadb')?.url ?? 'mysql://nobody@127.0.0.1:1/none';
    const r = await taskrow(['migrate', '--embedded'], { env: { TASKROW_URL: undefined, TASKROW_MARIADB_URL: named } });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/started mariadb \S+/);
    expect(r.stderr).toContain('stopped the embedded mariadb server');
    // Gone: its process and its data directory (its port, from the ephemeral range, may already
    // serve another test's server).
    const [, pid, dataDir] = /\(pid (\d+), data in (\S+)\)/.exec(r.stderr) ?? [];
    expect(Number(pid)).toBeGreaterThan(0);
    expect(existsSync(dataDir!)).toBe(false);
    expect(alive(Number(pid))).toBe(false);
  });
});
