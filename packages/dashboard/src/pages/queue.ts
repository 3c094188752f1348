import type { JobInfo, JobState, Queue } from '@taskrow/core';
import { seg, type Page, type PageContext } from '../context.js';
import { html, type Html } from '../html/escape.js';
import { count, duration, num, pretty, time } from '../html/format.js';
import type { DashboardSettings } from '../options.js';
import { actionForm, pager, STATES } from './parts.js';
import { pick, pickAll, selectionForm } from './selection.js';

/** Jobs per page on the queue page (`?limit=` 1 to 1000 overrides it). */
export const JOBS_PER_PAGE = 50;

const preview = (text: string, max = 140): string => (text.length > max ? `${text.slice(0, max)}…` : text);

function jobRows(ctx: PageContext, queue: string, jobs: readonly JobInfo[]): Html {
  if (jobs.length === 0) return html`<p class="muted">No jobs in this state.</p>`;
  const rows = jobs.map(
    (
      j,
    ) => html`<tr>${pick(ctx, j)}<td class="n"><a href="${ctx.link(`/queues/${seg(queue)}/jobs/${j.id}`)}">${j.id}</a></td><td class="${j.state === 'dead' ? 'bad' : ''}">${j.state}</td>
<td class="n">${j.attempt}/${j.maxAttempts}</td><td class="n">${j.priority}</td><td>${j.group ?? ''}</td><td>${time(j.dueAt)}</td>
<td><pre>${preview(JSON.stringify(j.payload) ?? pretty(j.payload))}</pre></td><td><pre class="bad">${j.lastError === null ? '' : preview(j.lastError, 80)}</pre></td></tr>`,
  );
  return html`<table class="jobs"><thead><tr>${pickAll(ctx)}<th class="n">id</th><th>state</th><th class="n">attempt</th><th class="n">priority</th><th>group</th><th>due / state time</th><th>payload</th><th>last error</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function stateOf(ctx: PageContext): JobState | undefined {
  const s = ctx.url.searchParams.get('state');
  return s === null || s === '' ? undefined : (s as JobState);
}

/** Whether the queue is paused, with the button that flips it; its limits, read-only. */
async function controls(ctx: PageContext, path: string, queue: Queue): Promise<Html> {
  const paused = await queue.isPaused();
  const concurrency = await queue.getConcurrencyLimit();
  const rate = await queue.getRateLimit();
  const flip = paused ? actionForm(ctx, `${path}/resume`, 'Resume queue') : actionForm(ctx, `${path}/pause`, 'Pause queue');
  const state = paused ? html`<strong class="paused bad">paused</strong>` : html`<strong class="paused ok">running</strong>`;
  const rateText = rate === null ? 'none' : `${num(rate.limit)} starts per ${rate.per % 1000 === 0 ? `${num(rate.per / 1000)} s` : `${num(rate.per)} ms`}`;
  return html`<div class="controls">Queue is ${state} ${flip}</div>
<p class="muted limits">Concurrency per key (queue default): <span class="concurrency">${num(concurrency)}</span> · rate limit: <span class="rate">${rateText}</span></p>`;
}

/**
 * A queue: paused or not (pause / resume), its limits, counts by state, tabs per state, one page of
 * jobs (`list()` with its cursor), dead-job actions on every dead job, and actions on the ticked
 * jobs (dead: retry, delete; not started: delete; delayed: run now).
 */
export async function queuePage(ctx: PageContext, settings: DashboardSettings): Promise<Page> {
  const name = ctx.params[0]!;
  const queue = ctx.taskrow.queue(name);
  const state = stateOf(ctx);
  const summary = await ctx.taskrow.inspect().queue(queue.name, { countLimit: settings.countLimit });
  const after = ctx.url.searchParams.get('after') ?? undefined;
  const limitText = ctx.url.searchParams.get('limit');
  const limit = limitText === null ? JOBS_PER_PAGE : Number(limitText);
  const page = await queue.list({ state, limit, after });
  const path = `/queues/${seg(queue.name)}`;
  const tab = (s: JobState | undefined, label: string): Html => html`<a class="${s === state ? 'on' : ''}" href="${ctx.link(path, { state: s })}">${label}</a>`;
  const tabs = [tab(undefined, 'all'), ...STATES.map((s) => tab(s, `${s} (${count(summary.counts[s])})`))];
  const dead =
    summary.counts.dead.value > 0
      ? html`<p>${actionForm(ctx, `${path}/retry-dead`, 'Retry every dead job')} ${actionForm(ctx, `${path}/delete-dead`, 'Delete every dead job')}</p>`
      : '';
  return {
    title: `Queue ${queue.name}`,
    body: html`<h1>Queue ${queue.name}</h1>
${await controls(ctx, path, queue)}
<p>Oldest runnable job waiting: <strong class="age">${duration(summary.oldestRunnableAge)}</strong></p>${dead}
<div class="tabs">${tabs}</div>
<div class="card">${selectionForm(ctx, path, page.jobs)}${jobRows(ctx, queue.name, page.jobs)}${pager(ctx, path, { state, limit: limitText ?? undefined }, 'after', page.next)}</div>`,
  };
}
