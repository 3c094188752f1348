import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, clickLoad, openOperator, recordingLogger, target, type Db, type Operator, type Served } from './harness.js';

const SHOTS = new URL('../../../docs/dashboard/', import.meta.url).pathname;
const TOKEN = 'pending-actions-token-0123456789';
const HOUR = 3_600_000;
/** `phase` values of `<prefix>queue_jobs`: ready, delayed, running, blocked. */
const READY = 0;
const DELAYED = 1;
const RUNNING = 2;
const BLOCKED = 5;
const t = target();

describe.skipIf(!browserAvailable())(`deleting and running jobs not yet started, in Chromium on ${t.engine} ${t.version}`, () => {
  let db: Db;
  let web: Served;
  let readOnly: Served;
  let page: Page;
  const logger = recordingLogger();
  const readOnlyLogger = recordingLogger();
  /** The probe's phase of each id, `null` for an id no longer in the table. */
  const phases = async (ids: readonly number[]) => {
    const rows = await db.rows(`SELECT \`id\`, \`phase\` FROM \`${db.prefix}queue_jobs\` WHERE \`id\` IN (?)`, [ids]);
    const by = new Map(rows.map((r) => [Number(r['id']), Number(r['phase'])]));
    return ids.map((id) => by.get(id) ?? null);
  };
  const text = async (selector: string) => (await page.locator(selector).first().textContent())?.trim();

  let operator: Operator | undefined;

  beforeAll(async () => {
    operator = await openOperator('p', TOKEN, { logger, readOnlyLogger });
    ({ db, web, readOnly, page } = operator);
  });
  afterAll(async () => {
    await operator?.close();
  });

  it('deletes a ticked ready job and a blocked one after a confirmation; the probe finds them gone and the running job kept', async () => {
    const q = db.tr.queue('pend');
    const keyed = await q.enqueueMany([
      { payload: { n: 1 }, concurrencyKey: 'k' },
      { payload: { n: 2 }, concurrencyKey: 'k' },
    ]);
    const [claimed] = await q.claim({ limit: 1, lease: HOUR });
    const running = claimed!.id;
    const blocked = keyed.map((e) => e.id).find((id) => id !== running)!;
    const { id: ready } = await q.enqueue({ n: 3 });
    expect(await phases([ready, blocked, running])).toEqual([READY, BLOCKED, RUNNING]);
    await page.goto(web.url('/queues/pend'));
    expect(await page.locator(`input.pick[value="${running}"]`).count()).toBe(0);
    await page.check(`input.pick[value="${ready}"]`);
    await page.check(`input.pick[value="${blocked}"]`);
    expect(await text('.pick-count')).toBe('2 selected');
    await page.screenshot({ path: `${SHOTS}queue-pending.png`, fullPage: true });
    await clickLoad(page, 'form.selection button.remove');
    const ids = [ready, blocked].sort((a, b) => a - b).join(', ');
    expect(await text('.confirm-question')).toBe(
      `Delete 2 selected job(s) (ids ${ids}) of queue pend that have not started (ready, delayed or blocked)? Running, finished and dead jobs are left alone.`,
    );
    expect(await phases([ready, blocked, running])).toEqual([READY, BLOCKED, RUNNING]);
    await clickLoad(page, 'form.confirm button');
    expect(await text('.action-result')).toBe('Queue pend: deleted 2 of 2 selected job(s) not yet started. Running, finished and dead jobs are left alone.');
    expect(await phases([ready, blocked, running])).toEqual([null, null, RUNNING]);
    const entry = logger.entries.find((e) => e.obj['action'] === 'remove-jobs')!;
    expect([entry.level, entry.obj['queue'], entry.obj['count']]).toEqual(['info', 'pend', 2]);
  });

  it('runs a delayed job now from its page and a ticked one from the queue page; the probe sees each ready', async () => {
    const q = db.tr.queue('later');
    const [one, two] = (
      await q.enqueueMany([
        { payload: { n: 1 }, delay: HOUR },
        { payload: { n: 2 }, delay: HOUR },
      ])
    ).map((e) => e.id) as [number, number];
    expect(await phases([one, two])).toEqual([DELAYED, DELAYED]);
    await page.goto(web.url(`/queues/later/jobs/${one}`));
    await clickLoad(page, 'form.action button:text-is("Run this job now")');
    expect(await text('.confirm-question')).toBe(`Run job ${one} of queue later now? Only delayed jobs are made due; the others are left alone.`);
    await clickLoad(page, 'form.confirm button');
    expect(await text('.action-result')).toBe(
      'Queue later: made 1 of 1 selected delayed job(s) due now. Running, finished and dead jobs (and jobs not delayed) are left alone.',
    );
    expect(await phases([one, two])).toEqual([READY, DELAYED]);
    await clickLoad(page, 'a:text-is("Back")');
    expect(await text('.job-state')).toBe('ready');
    await page.goto(web.url('/queues/later?state=delayed'));
    await page.check(`input.pick[value="${two}"]`);
    await clickLoad(page, 'form.selection button.promote');
    await clickLoad(page, 'form.confirm button');
    expect(await text('.action-result')).toContain('made 1 of 1 selected delayed job(s) due now');
    expect(await phases([one, two])).toEqual([READY, READY]);
    expect(logger.entries.filter((e) => e.obj['action'] === 'promote-jobs').map((e) => [e.level, e.obj['ids'], e.obj['count']])).toEqual([
      ['info', [one], 1],
      ['info', [two], 1],
    ]);
  });

  it('read-only: no tick boxes, and Delete and Run now are refused with the reason, logged, and change nothing', async () => {
    const q = db.tr.queue('ro-pend');
    const { id: ready } = await q.enqueue({ n: 1 });
    const { id: delayed } = await q.enqueue({ n: 2 }, { delay: HOUR });
    const html = await (await fetch(readOnly.url('/queues/ro-pend'))).text();
    expect(html).toContain(`>${delayed}</a>`);
    expect(html).not.toContain('class="pick"');
    expect(await (await fetch(readOnly.url(`/queues/ro-pend/jobs/${delayed}`))).text()).not.toContain('Run this job now');
    const origin = new URL(readOnly.base).origin;
    for (const path of ['/queues/ro-pend/remove', '/queues/ro-pend/promote']) {
      const res = await fetch(readOnly.url(path), {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: `id=${ready}&id=${delayed}&confirmed=1`,
      });
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('This dashboard is read-only: start it with an actions token');
    }
    expect(await phases([ready, delayed])).toEqual([READY, DELAYED]);
    expect(readOnlyLogger.entries.map((e) => [e.level, e.obj['action'], e.obj['status']])).toEqual([
      ['warn', 'remove-jobs', 403],
      ['warn', 'promote-jobs', 403],
    ]);
  });
});
