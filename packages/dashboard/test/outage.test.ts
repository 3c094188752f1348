import mysql from 'mysql2/promise';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Taskrow } from '@taskrow/core';
import { taskrow } from '@taskrow/mysql2';
import { browserAvailable, openBrowser, openDb, serve, target, type Db, type Served } from './harness.js';
import { Proxy } from './proxy.js';

const t = target();

describe.skipIf(!browserAvailable())(`dashboard while the database goes away on ${t.engine} ${t.version}`, () => {
  let db: Db;
  let proxy: Proxy;
  let pool: mysql.Pool;
  let tr: Taskrow;
  let web: Served;
  let browser: Awaited<ReturnType<typeof openBrowser>>;
  let page: Page;

  beforeAll(async () => {
    db = await openDb('o');
    await db.tr.queue('steady').enqueue({ n: 1 });
    const u = new URL(t.url);
    proxy = new Proxy(u.hostname, Number(u.port));
    await proxy.up();
    u.port = String(proxy.port);
    pool = mysql.createPool({ uri: u.toString(), connectionLimit: 4, connectTimeout: 2000 });
    tr = await taskrow(pool, { prefix: db.prefix, retry: { attempts: 1 } });
    web = await serve({ taskrow: tr, refreshInterval: 1000 });
    browser = await openBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });
  afterAll(async () => {
    await browser?.close();
    await web?.close();
    await pool?.end().catch(() => undefined);
    await proxy?.down();
    await db?.close();
  });

  it('shows an error banner while the database is away and recovers by itself when it is back', async () => {
    await page.goto(web.url('/'));
    const banner = page.locator('#banner');
    expect(await banner.isHidden()).toBe(true);
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 7));
    await proxy.down();
    await banner.waitFor({ state: 'visible', timeout: 60_000 });
    expect(await banner.textContent()).toContain('could not read the database');
    await proxy.up();
    await db.tr.queue('after').enqueue({ back: true });
    await page.locator('table.queues a:text-is("after")').waitFor({ timeout: 60_000 });
    await banner.waitFor({ state: 'hidden', timeout: 60_000 });
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(7);
  });

  it('answers a full page with status 503 and the banner while the database is away', async () => {
    await proxy.down();
    try {
      const res = await fetch(web.url('/queues/steady'));
      expect(res.status).toBe(503);
      const html = await res.text();
      expect(html).toMatch(/<div id="banner" class="banner" role="alert">database unavailable: /);
    } finally {
      await proxy.up();
    }
    expect((await fetch(web.url('/queues/steady'))).status).toBe(200);
  });
});
