import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// What a user gets from npm: scripts/pack-test.sh packs every public package and installs the
// tarballs with npm into scratch applications in a temporary folder outside the workspace (their
// dependencies from the registry). Needs `pnpm build` first, as scripts/test.sh does.
const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const dir = mkdtempSync(join(tmpdir(), 'taskrow-pack-'));
const app = join(dir, 'app');
const { version } = JSON.parse(readFileSync(join(root, 'packages/cli/package.json'), 'utf8')) as { version: string };

function run(command: string, args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env, npm_config_update_notifier: 'false' };
  const r = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('packed packages installed with npm into a scratch application', () => {
  beforeAll(() => {
    const r = run('bash', [join(root, 'scripts/pack-test.sh'), dir], root);
    expect(r.stderr.split('\n').filter((l) => /ERR!/.test(l))).toEqual([]);
    expect(r.status).toBe(0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("loads every package as ES modules; adapters reject with core's TaskrowError", () => {
    const r = run(process.execPath, ['esm.mjs'], app);
    expect(r.stderr).toBe('');
    expect([r.status, r.stdout]).toEqual([0, 'esm ok\n']);
  });

  it('requires every package from CommonJS, one instance of each for require and import', () => {
    const r = run(process.execPath, ['cjs.cjs'], app);
    expect(r.stderr).toBe('');
    expect([r.status, r.stdout]).toEqual([0, 'cjs ok\n']);
  });

  it.each(['node16', 'nodenext', 'bundler'])('type-checks an application under moduleResolution %s (skipLibCheck off)', (resolution) => {
    const r = run(process.execPath, [tsc, '-p', `tsconfig.${resolution}.json`], app);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('ships the source file behind every source map', () => {
    const maps = readdirSync(join(app, 'node_modules/@taskrow'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.map'))
      .map((f) => join(app, 'node_modules/@taskrow', f));
    expect(maps.length).toBeGreaterThan(100);
    const missing = maps.flatMap((map) => {
      const { sources } = JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] };
      return sources.filter((s) => !existsSync(resolve(dirname(map), s))).map((s) => `${map} -> ${s}`);
    });
    expect(missing).toEqual([]);
  });

  it('runs npx taskrow --version', () => {
    const r = run('npx', ['--no-install', 'taskrow', '--version'], app);
    expect([r.status, r.stdout]).toEqual([0, `${version}\n`]);
  });

  it('installs the CLI without @taskrow/servers; --embedded then says how to get it', () => {
    const cli = join(dir, 'cli-only');
    const ls = run('npm', ['ls', '--all', '--parseable'], cli);
    expect(ls.stdout).not.toMatch(/testcontainers|@taskrow[/\\]servers/);
    expect(run('npx', ['--no-install', 'taskrow', '--version'], cli).stdout).toBe(`${version}\n`);
    const r = run('npx', ['--no-install', 'taskrow', 'migrate', '--embedded'], cli);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('@taskrow/servers, which is not installed');
    expect(r.stderr).toContain('npm install -g @taskrow/servers');
  });
});
