import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, clickLoad, openOperator, recordingLogger, target, type Db, type Operator, type Served } from './harness.js';
import { deadJobs } from './seed.js';

const SHOTS = new URL('../../../docs/dashboard/', import.meta.url).pathname;
const TOKEN = 'operate-actions-token-0123456789';
const t = target();

describe.skipIf(!browserAvailable())(`operating queues, jobs and schedules in Chromium on ${t.engine} ${t.version}`, () => {
  let db: Db;
  let web: Served;
  let readOnly: Served;
  let page: Page;
  const logger = recordingLogger();
  const readOnlyLogger = recordingLogger();
  const pausedAt = async (queue: string) =>
    (await db.rows(`SELECT \`paused_at\` AS p FROM \`${db.prefix}queues\` WHERE \`queue\` = ?`, [queue]))[0]?.['p'] ?? null;
  const phases = async (ids: readonly number[]) =>
    (await db.rows(`SELECT \`id\`, \`phase\` FROM \`${db.prefix}queue_jobs\` WHERE \`id\` IN (?) ORDER BY \`id\``, [ids])).map((r) => Number(r['phase']));
  const text = async (selector: string) => (await page.locator(selector).first().textContent())?.trim();

  let operator: Operator | undefined;

  beforeAll(async () => {
    operator = await openOperator('o', TOKEN, { logger, readOnlyLogger }, '/ops');
    ({ db, web, readOnly, page } = operator);
  });
  afterAll(async () => {
    await operator?.close();
  });

  it('pauses and resumes a queue from its page; the probe sees it, claims take nothing meanwhile, and each action is logged', async () => {
    await db.tr.queue('ops').enqueue({ n: 1 });
    await page.goto(web.url('/queues/ops'));
    expect(await text('.paused')).toBe('running');
    await clickLoad(page, 'form.action button:has-text("Pause queue")');
    expect(await text('.action-result')).toBe('Queue ops is paused: workers take none of its jobs until it is resumed.');
    expect(await pausedAt('ops')).not.toBeNull();
    expect(await db.tr.queue('ops').claim({ limit: 1, lease: 60_000 })).toEqual([]);
    await clickLoad(page, 'a:text-is("Back")');
    expect(await text('.paused')).toBe('paused');
    await clickLoad(page, 'form.action button:has-text("Resume queue")');
    expect(await text('.action-result')).toBe('Queue ops is resumed: workers take its jobs again.');
    expect(await pausedAt('ops')).toBeNull();
    const logged = logger.entries.filter((e) => e.obj['queue'] === 'ops').map((e) => [e.level, e.obj['action']]);
    expect(logged).toEqual([
      ['info', 'pause'],
      ['info', 'resume'],
    ]);
    const entry = logger.entries.find((e) => e.obj['action'] === 'pause')!;
    expect(entry.obj['session']).toMatch(/^[\w-]{12}$/);
    expect(entry.obj['address']).toBe('127.0.0.1');
    expect(Date.now() - Date.parse(String(entry.obj['at']))).toBeLessThan(60_000);
    expect(entry.msg).toContain('Queue ops is paused');
  });

  it('shows the queue limits read-only', async () => {
    await db.tr.queue('limited').setConcurrencyLimit(3);
    await db.tr.queue('limited').setRateLimit({ limit: 20, per: 60_000 });
    await db.tr.queue('limited').enqueue({ n: 1 });
    await page.goto(web.url('/queues/limited'));
    expect(await text('.limits .concurrency')).toBe('3');
    expect(await text('.limits .rate')).toBe('20 starts per 60 s');
  });

  it('retries and deletes a selection of dead jobs: a live count, a confirmation that can be cancelled, and the probe sees each step', async () => {
    const ids = await deadJobs(db.tr, 'sel', 4);
    await page.goto(web.url('/queues/sel?state=dead'));
    expect(await text('.pick-count')).toBe('0 selected');
    await page.check(`input.pick[value="${ids[0]}"]`);
    await page.check(`input.pick[value="${ids[1]}"]`);
    expect(await text('.pick-count')).toBe('2 selected');
    await page.screenshot({ path: `${SHOTS}queue-actions.png`, fullPage: true });
    await clickLoad(page, 'form.selection button:has-text("Delete selected dead")');
    expect(await text('.confirm-question')).toBe(`Delete 2 selected dead job(s) of queue sel (ids ${ids[0]}, ${ids[1]})?`);
    await clickLoad(page, 'a.cancel');
    expect(page.url()).toBe(web.url('/queues/sel?state=dead'));
    expect(await phases(ids)).toEqual([4, 4, 4, 4]);
    await page.check(`input.pick[value="${ids[0]}"]`);
    await page.check(`input.pick[value="${ids[1]}"]`);
    await clickLoad(page, 'form.selection button:has-text("Retry selected dead")');
    expect(await text('.confirm-question')).toBe(`Retry 2 selected dead job(s) of queue sel (ids ${ids[0]}, ${ids[1]})?`);
    await clickLoad(page, 'form.confirm button');
    expect(await text('.action-result')).toBe('Queue sel: made 2 job(s) ready again (2 selected).');
    expect(await phases(ids)).toEqual([0, 0, 4, 4]);
    await page.goto(web.url('/queues/sel?state=dead'));
    await page.check('input.pick-all');
    expect(await text('.pick-count')).toBe('2 selected');
    await clickLoad(page, 'form.selection button:has-text("Delete selected dead")');
    await clickLoad(page, 'form.confirm button');
    expect(await text('.action-result')).toBe('Queue sel: deleted 2 job(s) (2 selected).');
    expect(await phases(ids)).toEqual([0, 0]);
    expect(logger.entries.find((e) => e.obj['action'] === 'selected' && e.obj['count'] === 2 && e.msg?.includes('deleted'))?.obj['ids']).toEqual(ids.slice(2));
  });

  it('shows a running job with its progress and lease expiry, then its result once done', async () => {
    const q = db.tr.queue('prog', { keepFinishedFor: 3_600_000 });
    const { id } = await q.enqueue({ file: 'a.csv' });
    const [job] = await q.claim({ limit: 1, lease: 600_000 });
    await q.progress(job!, { rows: 40, of: 100 });
    const info = (await q.getJob(id))!;
    await page.goto(web.url(`/queues/prog/jobs/${id}`));
    expect(await text('.job-state')).toBe('running');
    expect(JSON.parse((await text('pre.progress'))!)).toEqual({ rows: 40, of: 100 });
    expect(await text('dt:has(+ dd.job-due)')).toBe('lease expires');
    expect(await text('.job-due')).toBe(info.dueAt.toISOString().replace('T', ' ').replace('Z', ' UTC'));
    expect(await text('.job-attempts')).toBe('1 of 5');
    expect(await text('pre.result')).toBe('—');
    await q.complete(job!, { result: { imported: 100 } });
    await page.reload();
    expect(await text('.job-state')).toBe('done');
    expect(JSON.parse((await text('pre.result'))!)).toEqual({ imported: 100 });
  });

  it('lists schedules and removes one after a confirmation; the probe finds it gone and the other kept', async () => {
    const s = db.tr.schedules();
    await s.upsert('nightly', { queue: 'reports', cron: '0 3 * * *', tz: 'Europe/Berlin' });
    await s.upsert('tick', { queue: 'reports', every: 60_000 });
    const nightly = (await s.get('nightly'))!;
    const names = async () => (await db.rows(`SELECT \`name\` FROM \`${db.prefix}queue_schedules\` ORDER BY \`name\``)).map((r) => r['name']);
    await page.goto(web.url('/schedules'));
    const row = (name: string) => `table.schedules tr:has(td.schedule-name:text-is("${name}"))`;
    expect(await text(`${row('nightly')} code`)).toBe('cron 0 3 * * * (Europe/Berlin)');
    expect(await text(`${row('tick')} code`)).toBe('every 60 s');
    await page.screenshot({ path: `${SHOTS}schedules.png`, fullPage: true });
    expect(await text(`${row('nightly')} .next-at`)).toBe(nightly.nextAt!.toISOString().replace('T', ' ').replace('Z', ' UTC'));
    await clickLoad(page, `${row('nightly')} form.action button`);
    expect(await text('.confirm-question')).toBe('Remove schedule nightly? Jobs it already enqueued stay.');
    expect(await names()).toEqual(['nightly', 'tick']);
    await clickLoad(page, 'form.confirm button');
    expect(await text('.action-result')).toBe('Removed schedule nightly.');
    expect(await names()).toEqual(['tick']);
  });

  it('read-only: no action buttons, and every action is refused with the reason, logged, and changes nothing', async () => {
    await db.tr.queue('ro').enqueue({ n: 1 });
    await db.tr.schedules().upsert('kept', { queue: 'ro', every: 30_000 });
    const html = await (await fetch(readOnly.url('/queues/ro'))).text();
    expect(html).toContain('class="paused ok"');
    expect(html).not.toContain('Pause queue');
    expect(await (await fetch(readOnly.url('/schedules'))).text()).not.toContain('/remove');
    const origin = new URL(readOnly.base).origin;
    for (const path of ['/queues/ro/pause', '/schedules/kept/remove', '/queues/ro/selected']) {
      const res = await fetch(readOnly.url(path), {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'confirmed=1',
      });
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('This dashboard is read-only: start it with an actions token');
    }
    expect(await pausedAt('ro')).toBeNull();
    expect(await db.tr.schedules().get('kept')).not.toBeNull();
    expect(readOnlyLogger.entries.map((e) => [e.level, e.obj['action'], e.obj['status']])).toEqual([
      ['warn', 'pause', 403],
      ['warn', 'remove-schedule', 403],
      ['warn', 'selected', 403],
    ]);
  });

  it('refuses an action from a browser without the session, and logs the refusal', async () => {
    const res = await fetch(web.url('/queues/ops/pause'), {
      method: 'POST',
      headers: { origin: new URL(web.base).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(res.status).toBe(403);
    expect(await pausedAt('ops')).toBeNull();
    const refused = logger.entries.filter((e) => e.level === 'warn' && e.obj['action'] === 'pause');
    expect(refused.map((e) => [e.obj['status'], e.obj['reason']])).toEqual([[403, 'refused: give the actions token first (Enable actions)']]);
  });
});
