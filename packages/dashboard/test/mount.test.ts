import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dashboardHandler } from '../src/index.js';
import { browserAvailable, clickLoad, login, openBrowser, openDb, recordingLogger, target, type Db } from './harness.js';
import { expressApp, fastifyApp, listen } from './recipes.js';

const TOKEN = 'mount-actions-token-0123456789';
const t = target();

describe.skipIf(!browserAvailable())(`the README's Express and Fastify recipes, driven by Chromium on ${t.engine} ${t.version}`, () => {
  let db: Db;
  let browser: Awaited<ReturnType<typeof openBrowser>>;
  let page: Page;
  let stop: (() => Promise<void>) | undefined;
  const handler = () =>
    dashboardHandler({ taskrow: db.tr, basePath: '/admin/taskrow', actions: { token: TOKEN }, refreshInterval: 60_000, logger: recordingLogger() });

  /** Logs in through the mounted dashboard and pauses `queue` with the page's form; resolves once the probe sees it paused. */
  async function pauseThrough(base: string, queue: string): Promise<void> {
    await db.tr.queue(queue).enqueue({ n: 1 });
    await login(page, base, TOKEN);
    await page.goto(`${base}/queues/${queue}`);
    await clickLoad(page, 'form.action button:has-text("Pause queue")');
    expect(await page.locator('.action-result').textContent()).toBe(`Queue ${queue} is paused: workers take none of its jobs until it is resumed.`);
    const rows = await db.rows(`SELECT \`paused_at\` AS p FROM \`${db.prefix}queues\` WHERE \`queue\` = ?`, [queue]);
    expect(rows[0]?.['p']).toBeInstanceOf(Date);
  }

  beforeAll(async () => {
    db = await openDb('m');
    browser = await openBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });
  afterEach(async () => {
    await stop?.();
    stop = undefined;
    await browser.context.clearCookies();
  });
  afterAll(async () => {
    await browser?.close();
    await db?.close();
  });

  it('Express: a form POST pauses a queue', async () => {
    const app = await listen(expressApp(handler()));
    stop = app.close;
    await pauseThrough(app.base, 'express');
  });

  it('Express with an app-wide urlencoded body parser in front: the form still works', async () => {
    const app = await listen(expressApp(handler(), true));
    stop = app.close;
    await pauseThrough(app.base, 'express_parsed');
  });

  it('Fastify: a form POST pauses a queue', async () => {
    const app = await listen(await fastifyApp(handler()));
    stop = app.close;
    await pauseThrough(app.base, 'fastify');
  });

  it('Fastify without the content-type parser answers 415 to every form (why the recipe has it)', async () => {
    const app = await listen(await fastifyApp(handler(), false));
    stop = app.close;
    const res = await fetch(`${app.base}/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=x' });
    expect(res.status).toBe(415);
    expect((await fetch(`${app.base}/`)).status).toBe(200);
  });
});
