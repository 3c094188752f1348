import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TaskrowError } from '@taskrow/core';
import { CONSOLE_LOGGER, actorOf, audit } from '../src/audit.js';
import { dashboardHandler } from '../src/index.js';
import { openDb, recordingLogger, serve, type Db, type Served } from './harness.js';

const TOKEN = 'hardening-actions-token-0123456789';

/** A GET with the given `Host` header (fetch would send the URL's own). */
function getWithHost(web: Served, host: string, path = '/'): Promise<{ status: number; body: string }> {
  const url = new URL(web.url(path));
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('dashboard hardening: Host names, oversized forms, options and the action log', () => {
  let db: Db;
  let plain: Served;
  let named: Served;
  let open: Served;
  let acting: Served;

  beforeAll(async () => {
    db = await openDb('h');
    await db.tr.queue('h').enqueue({ n: 1 });
    plain = await serve({ taskrow: db.tr });
    named = await serve({ taskrow: db.tr, allowedHosts: ['dash.example.com', '.corp.example'] });
    open = await serve({ taskrow: db.tr, allowedHosts: true });
    acting = await serve({ taskrow: db.tr, actions: { token: TOKEN }, logger: recordingLogger() });
  });
  afterAll(async () => {
    for (const s of [plain, named, open, acting]) await s?.close();
    await db?.close();
  });

  it('answers 421 to a Host that is not an allowed name, before reading anything', async () => {
    const port = new URL(plain.base).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'app.localhost', '10.1.2.3']) {
      expect([host, (await getWithHost(plain, host)).status]).toEqual([host, 200]);
    }
    for (const host of ['evil.example', `evil.example:${port}`, 'dash.example.com', 'user@127.0.0.1']) {
      const res = await getWithHost(plain, host, '/queues/h');
      expect([host, res.status]).toEqual([host, 421]);
      expect(res.body).toContain('This dashboard does not answer to the host name');
      expect(res.body).not.toContain('table class="jobs"');
    }
    expect((await getWithHost(plain, 'evil.example', '/metrics')).status).toBe(421);
  });

  it('allows the listed names (a leading dot also allows subdomains), and every name with allowedHosts: true', async () => {
    for (const host of ['dash.example.com', 'DASH.example.com:8443', 'corp.example', 'a.b.corp.example', '127.0.0.1']) {
      expect([host, (await getWithHost(named, host)).status]).toEqual([host, 200]);
    }
    for (const host of ['example.com', 'xdash.example.com', 'notcorp.example']) expect([host, (await getWithHost(named, host)).status]).toEqual([host, 421]);
    expect((await getWithHost(open, 'anything.example')).status).toBe(200);
  });

  it('refuses bad and unknown options with INVALID_ARGUMENT, naming them', () => {
    const make = (o: Record<string, unknown>) => () => dashboardHandler({ taskrow: db.tr, ...o } as never);
    expect(make({ allowedHost: ['a'] })).toThrow(/no option "allowedHost"; accepted: .*allowedHosts, logger/);
    expect(make({ allowedHosts: 'dash.example.com' })).toThrow(/allowedHosts must be an array of host names or true/);
    expect(make({ allowedHosts: ['http://dash.example.com'] })).toThrow(/allowedHosts entries must be host names/);
    expect(make({ logger: { info: 'yes' } })).toThrow(/logger.info must be a function/);
    try {
      make({ allowedHosts: [''] })();
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(TaskrowError);
      expect((e as TaskrowError).code).toBe('INVALID_ARGUMENT');
    }
  });

  it('answers an oversized form with the 413 page instead of resetting the connection', async () => {
    const origin = new URL(acting.base).origin;
    const login = await fetch(acting.url('/login'), {
      method: 'POST',
      redirect: 'manual',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: TOKEN }).toString(),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = await (await fetch(acting.url('/queues/h'), { headers: { cookie } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    const big = `csrf=${encodeURIComponent(csrf)}&confirmed=1&note=${'x'.repeat(300_000)}`;
    const res = await fetch(acting.url('/queues/h/pause'), {
      method: 'POST',
      headers: { origin, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: big,
    });
    expect(res.status).toBe(413);
    const body = await res.text();
    expect(body).toContain('Form too large');
    expect(body).toContain('The form is larger than 65,536 bytes');
    expect(await db.tr.queue('h').isPaused()).toBe(false);
    const small = await fetch(acting.url('/queues/h/pause'), {
      method: 'POST',
      headers: { origin, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${encodeURIComponent(csrf)}`,
    });
    expect(small.status).toBe(200);
    expect(await db.tr.queue('h').isPaused()).toBe(true);
    const wrongType = await fetch(acting.url('/queues/h/resume'), {
      method: 'POST',
      headers: { origin, cookie, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(wrongType.status).toBe(415);
  });

  it('logs to the console when no logger is given, and a logger that throws is ignored', () => {
    const spy = vi.spyOn(console, 'info').mockImplementation(() => undefined);
    try {
      const actor = { session: 'abcdefghijkl', address: '127.0.0.1' };
      audit(CONSOLE_LOGGER, 'info', actor, 'pause', { queue: 'mail' }, 'taskrow dashboard: paused');
      expect(spy).toHaveBeenCalledTimes(1);
      const line = String(spy.mock.calls[0]![0]);
      expect(line).toMatch(/^taskrow dashboard: paused \{.*"action":"pause".*"queue":"mail".*"session":"abcdefghijkl".*"at":"\d{4}-/);
    } finally {
      spy.mockRestore();
    }
    const throwing = {
      info: () => {
        throw new Error('full disk');
      },
    };
    expect(() => audit(throwing, 'info', actorOf({ socket: {} } as never, undefined), 'pause', {}, 'x')).not.toThrow();
  });
});
