import { JOB_STATES, type QueueSummary, type RunningJob } from '@taskrow/core';
import { seg, type PageContext } from '../context.js';
import { html, type Html } from '../html/escape.js';
import { count, duration, time } from '../html/format.js';

/** The job states in list order (core's). */
export const STATES = JOB_STATES;

/** Queues with counts by state and the oldest runnable age. */
export function queueTable(ctx: PageContext, queues: readonly QueueSummary[]): Html {
  if (queues.length === 0) return html`<p class="muted">No queue holds a job.</p>`;
  const rows = queues.map(
    (q) => html`<tr><td><a href="${ctx.link(`/queues/${seg(q.name)}`)}">${q.name}</a></td>
${STATES.map((s) => html`<td class="n${s === 'dead' && q.counts.dead.value > 0 ? ' bad' : ''}">${count(q.counts[s])}</td>`)}
<td class="n">${duration(q.oldestRunnableAge)}</td></tr>`,
  );
  return html`<table class="queues"><thead><tr><th>queue</th>${STATES.map((s) => html`<th class="n">${s}</th>`)}<th class="n">oldest runnable</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** Resources jobs holding locks now, with their keys linked to the flow graph. */
export function runningTable(ctx: PageContext, jobs: readonly RunningJob[]): Html {
  if (jobs.length === 0) return html`<p class="muted">No Resources job holds locks.</p>`;
  const keys = (list: readonly string[]): Html[] => list.map((k) => html`<a href="${ctx.link('/resources', { focus: k })}">${k}</a> `);
  const rows = jobs.map(
    (j) =>
      html`<tr><td>${j.job}</td><td>${j.owner}</td><td>${time(j.acquiredAt)}</td><td>${time(j.leaseUntil)}</td><td>${keys(j.inputs)}</td><td>${keys(j.outputs)}</td></tr>`,
  );
  return html`<table class="running"><thead><tr><th>job</th><th>owner</th><th>acquired</th><th>lease until</th><th>inputs</th><th>outputs</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** "Next page" and "first page" links for a cursor-paged list. */
export function pager(ctx: PageContext, path: string, query: Record<string, string | undefined>, param: string, next: string | undefined): Html {
  const here = ctx.url.searchParams.get(param);
  if (!here && !next) return html``;
  const first = here ? html`<a href="${ctx.link(path, { ...query, [param]: undefined })}">First page</a>` : '';
  const more = next
    ? html`<a rel="next" class="next" href="${ctx.link(path, { ...query, [param]: next })}">Next page</a>`
    : html`<span class="muted">Last page</span>`;
  return html`<div class="pager">${first}${more}</div>`;
}

/** A POST form for an action: CSRF token included; a note to log in when actions need the token. */
export function actionForm(ctx: PageContext, path: string, label: string, fields: Record<string, string> = {}): Html {
  const a = ctx.actions;
  if (a === undefined) return html``;
  if (a.loginNeeded) return html`<a class="muted" href="${ctx.link('/login')}">${label} (enable actions first)</a>`;
  const hidden = Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<form method="post" action="${ctx.link(path)}" class="inline action"><input type="hidden" name="csrf" value="${a.csrf}">${hidden}<button>${label}</button></form>`;
}
