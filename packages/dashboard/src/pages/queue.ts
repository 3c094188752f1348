import type { JobInfo, JobState } from '@taskrow/core';
import { seg, type Page, type PageContext } from '../context.js';
import { html, type Html } from '../html/escape.js';
import { count, duration, pretty, time } from '../html/format.js';
import type { DashboardSettings } from '../options.js';
import { actionForm, pager, STATES } from './parts.js';

/** Jobs per page on the queue page (`?limit=` 1 to 1000 overrides it). */
export const JOBS_PER_PAGE = 50;

const preview = (text: string, max = 140): string => (text.length > max ? `${text.slice(0, max)}…` : text);

function jobRows(ctx: PageContext, queue: string, jobs: readonly JobInfo[]): Html {
  if (jobs.length === 0) return html`<p class="muted">No jobs in this state.</p>`;
  const rows = jobs.map(
    (
      j,
    ) => html`<tr><td class="n"><a href="${ctx.link(`/queues/${seg(queue)}/jobs/${j.id}`)}">${j.id}</a></td><td class="${j.state === 'dead' ? 'bad' : ''}">${j.state}</td>
<td class="n">${j.attempt}/${j.maxAttempts}</td><td class="n">${j.priority}</td><td>${j.group ?? ''}</td><td>${time(j.dueAt)}</td>
<td><pre>${preview(JSON.stringify(j.payload) ?? pretty(j.payload))}</pre></td><td><pre class="bad">${j.lastError === null ? '' : preview(j.lastError, 80)}</pre></td></tr>`,
  );
  return html`<table class="jobs"><thead><tr><th class="n">id</th><th>state</th><th class="n">attempt</th><th class="n">priority</th><th>group</th><th>due / state time</th><th>payload</th><th>last error</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function stateOf(ctx: PageContext): JobState | undefined {
  const s = ctx.url.searchParams.get('state');
  return s === null || s === '' ? undefined : (s as JobState);
}

/** A queue: counts by state, tabs per state, one page of jobs (`list()` with its cursor), dead-job actions. */
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
<p>Oldest runnable job waiting: <strong class="age">${duration(summary.oldestRunnableAge)}</strong></p>${dead}
<div class="tabs">${tabs}</div>
<div class="card">${jobRows(ctx, queue.name, page.jobs)}${pager(ctx, path, { state, limit: limitText ?? undefined }, 'after', page.next)}</div>`,
  };
}
