import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskrowError } from '@taskrow/core';
import { dashboardHandler } from '../src/index.js';
import { browserAvailable, clickLoad, openBrowser, openDb, recordingLogger, serve, target, type Db, type Served } from './harness.js';
import { deadJobs } from './seed.js';

const TOKEN = 'test-actions-token-0123456789';
const t = target();

describe.skipIf(!browserAvailable())(`dashboard actions in Chromium on ${t.engine} ${t.version}`, () => {
  let db: Db;
  let web: Served;
  let readOnly: Served;
  let browser: Awaited<ReturnType<typeof openBrowser>>;
  let page: Page;
  const phase = async (id: number): Promise<number | undefined> => {
    const rows = await db.rows(`SELECT \`phase\` FROM \`${db.prefix}queue_jobs\` WHERE \`id\` = ?`, [id]);
    return rows[0] === undefined ? undefined : Number(rows[0]['phase']);
  };
  const post = (path: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(web.url(path), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(web.base).origin, ...headers },
      body: new URLSearchParams(body).toString(),
    });

  beforeAll(async () => {
    db = await openDb('a');
    web = await serve({ taskrow: db.tr, actions: { token: TOKEN }, refreshInterval: 60_000, logger: recordingLogger() }, '/admin/taskrow');
    readOnly = await serve({ taskrow: db.tr, logger: recordingLogger() });
    browser = await openBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  });
  afterAll(async () => {
    await browser?.close();
    await web?.close();
    await readOnly?.close();
    await db?.close();
  });

  it('refuses unknown and bad options, naming them and the accepted names', () => {
    const bad = (o: unknown) => () => dashboardHandler(o as never);
    expect(bad({ taskrow: db.tr, bogus: 1 })).toThrow(
      /no option "bogus"; accepted: taskrow, actions, basePath, refreshInterval, countLimit, allowedHosts, logger/,
    );
    expect(bad({ taskrow: db.tr, actions: { token: 'short' } })).toThrow(/actions.token must be a string of 16 to 1024 characters/);
    expect(bad({ taskrow: db.tr, basePath: 'admin/' })).toThrow(TaskrowError);
  });

  it('has no actions without a token: no forms, and a POST is refused', async () => {
    const [id] = await deadJobs(db.tr, 'ro', 1);
    const html = await (await fetch(readOnly.url(`/queues/ro/jobs/${id}`))).text();
    expect(html).toContain('dead');
    expect(html).not.toContain('retry-dead');
    const res = await fetch(readOnly.url('/queues/ro/retry-dead'), {
      method: 'POST',
      headers: { origin: new URL(readOnly.base).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('This dashboard is read-only');
    expect(await phase(id!)).toBe(4);
  });

  it('enables actions with the token, retries a dead job from its page, and the probe sees it ready', async () => {
    const [id] = await deadJobs(db.tr, 'jobs', 1);
    await page.goto(web.url('/login'));
    await page.fill('input[name=token]', 'not-the-token-at-all');
    await clickLoad(page, 'form.login button');
    expect(await page.locator('.login-error').textContent()).toContain('not the actions token');
    expect(await browser.context.cookies()).toEqual([]);
    await page.fill('input[name=token]', TOKEN);
    await clickLoad(page, 'form.login button');
    await page.waitForURL(web.url('/'));
    await page.goto(web.url(`/queues/jobs/jobs/${id}`));
    expect(await page.locator('.job-state').textContent()).toBe('dead');
    await clickLoad(page, 'form.action button:has-text("Retry this job")');
    expect(await page.locator('.action-result').textContent()).toBe(`Queue jobs: made 1 job(s) ready again (dead job ${id}).`);
    expect(await phase(id!)).toBe(0);
    await clickLoad(page, 'a:text-is("Back")');
    expect(await page.locator('.job-state').textContent()).toBe('ready');
  });

  it('deletes every dead job of a queue, and the probe finds none', async () => {
    await deadJobs(db.tr, 'trash', 3);
    await page.goto(web.url('/queues/trash?state=dead'));
    expect(await page.locator('table.jobs tbody tr').count()).toBe(3);
    await clickLoad(page, 'form.action button:has-text("Delete every dead job")');
    expect(await page.locator('.confirm-question').textContent()).toBe('Delete every dead job of queue trash?');
    expect(Number((await db.rows(`SELECT COUNT(*) AS n FROM \`${db.prefix}queue_jobs\` WHERE \`queue\` = 'trash'`))[0]!['n'])).toBe(3);
    await clickLoad(page, 'form.confirm button');
    expect(await page.locator('.action-result').textContent()).toBe('Queue trash: deleted 3 job(s) (every dead job).');
    expect((await db.rows(`SELECT COUNT(*) AS n FROM \`${db.prefix}queue_jobs\` WHERE \`queue\` = 'trash'`))[0]!['n']).toBe(0);
  });

  it('force-releases a resource key held by a running job', async () => {
    const job = await db.tr.resources({ releaseOnExit: false }).acquire('hold', { inputs: [], outputs: ['locked.key'], lease: 600_000 });
    const locks = () => db.rows(`SELECT COUNT(*) AS n FROM \`${db.prefix}resource_locks\``);
    expect(Number((await locks())[0]!['n'])).toBe(1);
    await page.goto(web.url('/resources'));
    expect(await page.locator('table.running').textContent()).toContain('locked.key');
    await page.fill('form.force-release input[name=key]', 'locked.key');
    await clickLoad(page, 'form.force-release button');
    expect(await page.locator('.confirm-question').textContent()).toBe('Force-release the locks on key "locked.key"? Their holders see them lost.');
    expect(Number((await locks())[0]!['n'])).toBe(1);
    await clickLoad(page, 'form.confirm button');
    expect(await page.locator('.action-result').textContent()).toBe('Removed 1 lock(s) on key "locked.key".');
    expect(Number((await locks())[0]!['n'])).toBe(0);
    expect((await job.refresh()).map((r) => r.reason)).toEqual(['output_lock_lost']);
  });

  it('refuses an action without the session, with a wrong CSRF token, or from another origin; accepts the right one', async () => {
    const [id] = await deadJobs(db.tr, 'csrf', 1);
    await page.goto(web.url(`/queues/csrf/jobs/${id}`));
    const csrf = (await page.locator('form.action input[name=csrf]').first().getAttribute('value'))!;
    const cookie = (await browser.context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const path = '/queues/csrf/retry-dead';
    expect((await post(path, { csrf, id: String(id) })).status).toBe(403);
    expect((await post(path, { csrf: 'x'.repeat(csrf.length), id: String(id) }, { cookie })).status).toBe(403);
    expect((await post(path, { id: String(id) }, { cookie })).status).toBe(403);
    expect((await post(path, { csrf, id: String(id) }, { cookie, origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(path, { csrf, id: String(id) }, { cookie: cookie.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')) })).status).toBe(403);
    expect(await phase(id!)).toBe(4);
    const ok = await post(path, { csrf, id: String(id) }, { cookie });
    expect(ok.status).toBe(200);
    expect(await phase(id!)).toBe(0);
  });
});
