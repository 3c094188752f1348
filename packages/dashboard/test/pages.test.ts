import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, clickLoad, openBrowser, openDb, serve, target, type Db, type Served } from './harness.js';
import { deadJobs, flow, manyJobs, XSS_ERROR, XSS_PAYLOAD } from './seed.js';

const SHOTS = new URL('../../../docs/dashboard/', import.meta.url).pathname;
const t = target();

describe.skipIf(!browserAvailable())(`dashboard pages in Chromium on ${t.engine} ${t.version}`, () => {
  let db: Db;
  let web: Served;
  let browser: Awaited<ReturnType<typeof openBrowser>>;
  let page: Page;
  let xssId: number;
  let bulk: number[];

  beforeAll(async () => {
    db = await openDb('p');
    xssId = (await db.tr.queue('mail').enqueue(XSS_PAYLOAD)).id;
    await db.tr.queue('mail').enqueueMany([{ payload: { to: 'ops@example.com' }, delay: 600_000 }, { payload: { to: 'a@example.com' } }]);
    await deadJobs(db.tr, 'mail', 2, XSS_ERROR);
    bulk = await manyJobs(db.tr, 'bulk', 10_000);
    await db.tr.dones('crawl').mark(['https://example.com/a', 'https://example.com/<b>', 'https://example.com/c']);
    await db.tr.createLoop('pages');
    await db.tr.loop('pages').add([1, 2, 3, 4]);
    await db.tr.loop('pages').get(2);
    await flow(db.tr, ['2026-11-01', '2026-11-02']);
    await db.tr
      .resources({ releaseOnExit: false })
      .acquire('publish.2026-11-02', { inputs: ['summary.2026-11-02'], outputs: ['site.2026-11-02'], lease: 600_000 });
    web = await serve({ taskrow: db.tr, refreshInterval: 1000 });
    browser = await openBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await web?.close();
    await db?.close();
  });

  it('shows every queue with its counts by state, as the probe counts them, and every loop and namespace', async () => {
    await page.goto(web.url('/'));
    const counts = await db.rows(`SELECT \`queue\` AS q, \`phase\` AS p, COUNT(*) AS n FROM \`${db.prefix}queue_jobs\` GROUP BY \`queue\`, \`phase\``);
    const cell = async (queue: string, col: number) => (await page.locator(`table.queues tr:has(a:text-is("${queue}")) td`).nth(col).textContent())?.trim();
    for (const r of counts) expect(await cell(String(r['q']), 1 + Number(r['p']))).toBe(Number(r['n']).toLocaleString('en-US'));
    expect(await cell('mail', 5)).toBe('2');
    await expect.poll(() => page.locator('table.loops td').nth(2).textContent()).toBe('2');
    expect(await page.locator('table.dones a:text-is("crawl")').count()).toBe(1);
    expect(await page.locator('table.dones td').nth(1).textContent()).toBe('3');
    await page.screenshot({ path: `${SHOTS}overview.png`, fullPage: true });
  });

  it('refreshes the overview in place, without a reload', async () => {
    await page.goto(web.url('/'));
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    await db.tr.queue('fresh').enqueue({ hello: 'world' });
    await page.locator('table.queues a:text-is("fresh")').waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);
  });

  it('opens a queue, a job, a loop and a Dones namespace from the overview', async () => {
    await page.goto(web.url('/'));
    await clickLoad(page, 'table.queues a:text-is("mail")');
    expect(await page.locator('h1').textContent()).toBe('Queue mail');
    await clickLoad(page, '.tabs a:has-text("dead")');
    expect(await page.locator('table.jobs tbody tr').count()).toBe(2);
    await page.screenshot({ path: `${SHOTS}queue.png`, fullPage: true });
    await clickLoad(page, 'table.jobs tbody tr >> nth=0 >> a');
    expect(await page.locator('.job-state').textContent()).toBe('dead');
    expect(await page.locator('pre.last-error').textContent()).toContain(XSS_ERROR);
    await page.goto(web.url('/'));
    await clickLoad(page, 'table.loops a:text-is("pages")');
    expect(await page.locator('dl.loop-stats').textContent()).toContain('locked ids2');
    await page.goto(web.url('/'));
    await clickLoad(page, 'table.dones a:text-is("crawl")');
    expect(await page.locator('table.keys pre').allTextContents()).toEqual(['https://example.com/<b>', 'https://example.com/a', 'https://example.com/c']);
    await page.goto(web.url('/queues/no%20such'));
    expect(await page.locator('.error-message').textContent()).toContain('invalid queue name "no such"');
  });

  it('renders a script payload and error as text and never runs them', async () => {
    await page.goto(web.url(`/queues/mail/jobs/${xssId}`));
    expect(JSON.parse((await page.locator('pre.payload').textContent())!)).toEqual(XSS_PAYLOAD);
    await page.screenshot({ path: `${SHOTS}job.png`, fullPage: true });
    await page.goto(web.url('/queues/mail?state=dead'));
    expect(await page.locator('table.jobs').textContent()).toContain('<script>window.__xss = 3</script>');
    await page.goto(web.url('/queues/mail'));
    expect(await page.locator('table.jobs').textContent()).toContain('<img src=x onerror=');
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(browser.dialogs).toEqual([]);
  });

  it('pages through 10,000 jobs with the list cursor, every job exactly once, in claim order', async () => {
    await page.goto(web.url('/queues/bulk?state=ready&limit=500'));
    const seen: number[] = [];
    for (let pages = 0; pages < 100; pages++) {
      seen.push(...(await page.locator('table.jobs tbody tr td:first-child').allTextContents()).map(Number));
      const next = page.locator('.pager a.next');
      if ((await next.count()) === 0) break;
      const href = (await next.getAttribute('href'))!;
      await next.click();
      await page.waitForURL((u) => `${u.pathname}${u.search}` === href, { waitUntil: 'load' });
    }
    expect(seen).toHaveLength(10_000);
    expect(seen).toEqual(bulk);
  });

  it('draws the flow graph as SVG with every key and job, and walks up and downstream by clicking', async () => {
    await page.goto(web.url('/resources'));
    const names = await page.locator('svg.flow g.node').evaluateAll((gs) => gs.map((g) => `${g.getAttribute('data-kind')} ${g.getAttribute('data-name')}`));
    const expected = ['key raw.eu.*', 'job ingest.eu.*', 'key clean.eu.*', 'job report.eu.*', 'key report.eu.*', 'job summary.*', 'key summary.*'];
    for (const n of expected) expect(names).toContain(n);
    expect(names).toContain('job publish.*');
    expect(names).toHaveLength(3 * 5 + 4);
    await page.screenshot({ path: `${SHOTS}flow-graph.png`, fullPage: true });
    await clickLoad(page, 'svg.flow g.node[data-kind="key"][data-name="clean.us.*"]');
    await page.waitForURL(/focus=clean\.us/);
    expect(await page.locator('ul.upstream a').allTextContents()).toEqual(['ingest.us.*', 'raw.us.*']);
    expect((await page.locator('ul.downstream a').allTextContents()).sort()).toEqual([
      'publish.*',
      'report.us.*',
      'report.us.*',
      'site.*',
      'summary.*',
      'summary.*',
    ]);
    expect(await page.locator('svg.flow g.focus').getAttribute('data-name')).toBe('clean.us.*');
  });
});
