import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { installedServers, startServer, type ServerHandle } from '../src/index.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitUntil(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return cond();
}

const local = installedServers();
const ci = process.env['CI'] === 'true';
const started: ServerHandle[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((h) => h.stop()));
});

describe('startServer: environment', () => {
  const target = inject('targets')[0]!;
  it('takes a version-specific URL from the environment and checks it is that engine', async () => {
    const name = `TASKROW_${target.engine.toUpperCase()}_${target.version.split('.').slice(0, 2).join('_')}_URL`;
    process.env[name] = target.url;
    try {
      const h = await startServer({ engine: target.engine, version: target.version.split('.').slice(0, 2).join('.'), sources: ['env'] });
      expect(h.source).toBe('env');
      expect(h.url).toBe(target.url);
      expect(h.version).toBe(target.version);
    } finally {
      delete process.env[name];
    }
  });

  it('rejects a URL that points at the other engine, naming the variable', async () => {
    const other = target.engine === 'mysql' ? 'mariadb' : 'mysql';
    const name = `TASKROW_${other.toUpperCase()}_URL`;
    process.env[name] = target.url;
    try {
      await expect(startServer({ engine: other, sources: ['env'] })).rejects.toThrow(new RegExp(`${name} points at ${target.engine}`));
    } finally {
      delete process.env[name];
    }
  });
});

describe('startServer: nothing available', () => {
  it('names the three ways to get a server', async () => {
    const err = await startServer({ engine: 'mysql', version: '5.1' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    const msg = (err as Error).message;
    expect(msg).toMatch(/TASKROW_MYSQL_5_1_URL/);
    expect(msg).toMatch(/container runtime/);
    expect(msg).toMatch(/install-servers\.sh/);
  });
});

describe.runIf(local.length > 0 || ci)('startServer: local binaries', () => {
  const server = local.find((s) => s.engine === 'mariadb') ?? local[0];

  it('starts on a private data dir and loopback port; stop() ends that pid and removes the dir', async () => {
    expect(server, 'an installed server (run install-servers.sh)').toBeDefined();
    const h = await startServer({ engine: server!.engine, version: server!.version, sources: ['local'] });
    started.push(h);
    expect(h.source).toBe('local');
    expect(h.version).toBe(server!.version);
    expect(new URL(h.url).hostname).toBe('127.0.0.1');
    expect(alive(h.pid!)).toBe(true);
    expect(existsSync(h.dataDir!)).toBe(true);
    await h.stop();
    expect(alive(h.pid!)).toBe(false);
    expect(existsSync(h.dataDir!)).toBe(false);
  });

  it('does not outlive a run that is killed with SIGKILL', async () => {
    expect(server).toBeDefined();
    const script = `
      import { startServer } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).pathname)};
      const h = await startServer({ engine: ${JSON.stringify(server!.engine)}, version: ${JSON.stringify(server!.version)}, sources: ['local'] });
      process.stdout.write(JSON.stringify({ pid: h.pid, dataDir: h.dataDir }) + '\\n');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      let buf = '';
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
      });
      child.on('exit', (code) => reject(new Error(`child exited ${code} before starting a server`)));
    });
    const { pid, dataDir } = JSON.parse(line) as { pid: number; dataDir: string };
    expect(alive(pid)).toBe(true);
    child.kill('SIGKILL');
    expect(await waitUntil(() => !alive(pid), 30_000)).toBe(true);
    expect(await waitUntil(() => !existsSync(dataDir), 5_000)).toBe(true);
  });
});

describe('install-servers.sh', () => {
  // Installing one server (as scripts/demo.sh does) must not drop the others from the manifest.
  it.skipIf(!ci && (local.length < 2 || process.getuid?.() !== 0))(
    'keeps every installed server in the manifest when asked for one',
    async () => {
      const script = new URL('../scripts/install-servers.sh', import.meta.url).pathname;
      const code = await new Promise<number | null>((resolve, reject) => {
        const child = spawn('bash', [script], { env: { ...process.env, TASKROW_SERVERS: 'mariadb-10.11' }, stdio: 'ignore' });
        child.on('error', reject);
        child.on('close', resolve);
      });
      expect(code).toBe(0);
      const key = (s: { engine: string; version: string }): string => `${s.engine} ${s.version}`;
      expect(installedServers().map(key).sort()).toEqual(local.map(key).sort());
      expect(local.length).toBeGreaterThanOrEqual(2);
    },
    120_000,
  );
});
