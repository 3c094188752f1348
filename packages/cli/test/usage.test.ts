import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { taskrow } from './run.js';

describe('taskrow: usage and bad input (no server needed)', () => {
  it('prints usage with --help (exit 0) and without a command (exit 2)', async () => {
    const help = await taskrow(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/usage: taskrow COMMAND/);
    const none = await taskrow([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/usage: taskrow COMMAND/);
  });

  it('prints its version with --version', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    const r = await taskrow(['--version']);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, `${version}\n`, '']);
  });

  it("keeps usage errors short: the problem, the command's usage lines, a pointer to --help", async () => {
    const r = await taskrow(['dones', 'explode', 'ns'], { env: { TASKROW_URL: undefined } });
    expect(r.code).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^taskrow: unknown dones action "explode"/);
    expect(lines.slice(1, -1).every((l) => l === 'usage:' || l.startsWith('  dones '))).toBe(true);
    expect(lines.length).toBeLessThan(10);
    expect(lines.at(-1)).toBe('run taskrow --help for every command and option');
    const queue = await taskrow(['queue', 'enqueue'], { env: { TASKROW_URL: undefined } });
    expect(queue.stderr).toContain('--delay D --priority N'); // a continuation line stays with its command
    const unknown = await taskrow(['frobnicate']);
    expect(unknown.stderr.trimEnd().split('\n')).toEqual([
      'taskrow: unknown command "frobnicate"',
      expect.stringMatching(/^usage: taskrow COMMAND/),
      'run taskrow --help for every command and option',
    ]);
  });

  it('exits 2 on unknown commands, actions and flags, naming them', async () => {
    const cmd = await taskrow(['frobnicate']);
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toContain('unknown command "frobnicate"');
    const flag = await taskrow(['dones', 'count', 'ns', '--bogus'], { env: { TASKROW_URL: undefined } });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--bogus');
    const action = await taskrow(['dones', 'explode', 'ns'], { env: { TASKROW_URL: undefined } });
    expect(action.code).toBe(2);
    expect(action.stderr).toContain('unknown dones action "explode"');
  });

  it('names the closest flag or action to a misspelt one, on one line', async () => {
    const env = { TASKROW_URL: undefined };
    const flag = await taskrow(['dones', 'list', 'ns', '--limt', '5'], { env });
    expect([flag.code, flag.stderr.split('\n')[0]]).toEqual([2, 'taskrow: unknown option --limt (did you mean --limit?)']);
    const far = await taskrow(['dones', 'list', 'ns', '--zzzzzz'], { env });
    expect(far.stderr.split('\n')[0]).toBe('taskrow: unknown option --zzzzzz');
    const missing = await taskrow(['dones', 'list', 'ns', '--limit'], { env });
    expect([missing.code, missing.stderr.split('\n')[0]]).toEqual([2, 'taskrow: --limit needs a value']);
    const action = await taskrow(['queue', 'enqeue', 'q'], { env });
    expect([action.code, action.stderr.split('\n')[0]]).toEqual([2, 'taskrow: unknown queue action "enqeue" (did you mean enqueue?)']);
  });

  it("prints a command's own help with COMMAND --help", async () => {
    const r = await taskrow(['queue', '--help']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('usage:');
    expect(lines[1]).toMatch(/^ {2}queue enqueue /);
    expect(lines.filter((l) => /^ {2}[a-z]/.test(l)).every((l) => l.startsWith('  queue '))).toBe(true);
    expect(r.stdout).toContain('connection:');
    expect(r.stdout).toContain('exit codes:');
  });

  it("checks job flags against the library's ranges before connecting", async () => {
    const env = { TASKROW_URL: undefined };
    const priority = await taskrow(['queue', 'enqueue', 'q', '{}', '--priority', '40000'], { env });
    expect([priority.code, priority.stderr.split('\n')[0]]).toEqual([2, 'taskrow: --priority must be a whole number from -32768 to 32767, got "40000"']);
    const attempts = await taskrow(['schedule', 'add', 's', '--queue', 'q', '--every', '5s', '--max-attempts', '1001'], { env });
    expect([attempts.code, attempts.stderr.split('\n')[0]]).toEqual([2, 'taskrow: --max-attempts must be a whole number from 1 to 1000, got "1001"']);
    const delay = await taskrow(['queue', 'enqueue', 'q', '{}', '--delay', '5 s'], { env });
    expect([delay.code, delay.stderr.split('\n')[0]]).toEqual([
      2,
      'taskrow: --delay must be a duration from 0 ms to 315,360,000,000 ms, such as 500ms, 5s, 2m or 1h (a bare number is milliseconds), got "5 s"',
    ]);
    const every = await taskrow(['schedule', 'add', 's', '--queue', 'q', '--every', '500ms'], { env });
    expect([every.code, every.stderr.split('\n')[0]]).toEqual([2, expect.stringContaining('--every must be a duration from 1,000 ms to 315,360,000,000 ms')]);
  });

  it('asks for a database when neither --url nor TASKROW_URL is given', async () => {
    const r = await taskrow(['dones', 'count', 'ns'], { env: { TASKROW_URL: undefined } });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--url/);
    expect(r.stderr).toMatch(/TASKROW_URL/);
    expect(r.stderr).toMatch(/--embedded/);
  });

  it('names what is wrong with a bad URL and never prints its password', async () => {
    const scheme = await taskrow(['migrate', '--url', 'postgres://me:hunter2@db.example/app']);
    expect(scheme.code).toBe(2);
    expect(scheme.stderr).toContain('unsupported scheme "postgres"');
    expect(scheme.stderr).not.toContain('hunter2');
    const nodb = await taskrow(['migrate', '--url', 'mysql://me:hunter2@127.0.0.1:3306']);
    expect(nodb.code).toBe(2);
    expect(nodb.stderr).toContain('no database name');
    expect(nodb.stderr).not.toContain('hunter2');
    for (const url of ['mysql://user:p@ss:w/rd#1@127.0.0.1:1/app', 'mysql://user:1/pw@127.0.0.1:1/app', 'mysql://u:pä%ss€@127.0.0.1:1/app']) {
      const r = await taskrow(['dones', 'count', 'ns', '--url', url]);
      const password = url.slice(url.indexOf(':', 8) + 1, url.lastIndexOf('@'));
      for (let i = 0; i + 3 <= password.length; i++) expect(r.stderr).not.toContain(password.slice(i, i + 3));
    }
    const garbage = await taskrow(['migrate', '--url', 'not a url']);
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toContain('not a URL');
  });

  it('says an unreachable server is unreachable within a few seconds, password hidden', async () => {
    const r = await taskrow(['dones', 'count', 'ns', '--url', 'mysql://me:hunter2@127.0.0.1:1/app']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot reach the database at mysql://me:***@127.0.0.1:1/app');
    expect(r.stderr).not.toContain('hunter2');
    expect(r.ms).toBeLessThan(10_000);
  });

  it('prints the DDL without a connection, under the given prefix', async () => {
    const r = await taskrow(['schema', '--prefix', 'app_'], { env: { TASKROW_URL: undefined } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('CREATE TABLE IF NOT EXISTS `app_dones`');
    expect(r.stdout).toContain('CREATE TABLE IF NOT EXISTS `app_schema_migrations`');
    const bad = await taskrow(['schema', '--prefix', 'bad-prefix']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('INVALID_NAME');
  });
});
