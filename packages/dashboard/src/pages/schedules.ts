import type { MissedPolicy, ScheduleInfo } from '@taskrow/core';
import { seg, type Page, type PageContext } from '../context.js';
import { html, type Html } from '../html/escape.js';
import { num, time } from '../html/format.js';
import { actionForm } from './parts.js';

/** When a schedule ticks: its cron pattern and time zone, or its interval. */
const when = (s: ScheduleInfo): string => (s.cron !== null ? `cron ${s.cron} (${s.tz ?? 'UTC'})` : `every ${num((s.every ?? 0) / 1000)} s`);

const missedText = (m: MissedPolicy): string => (typeof m === 'string' ? m : `each (latest ${m.each})`);

function row(ctx: PageContext, s: ScheduleInfo): Html {
  return html`<tr><td class="schedule-name">${s.name}</td><td><a href="${ctx.link(`/queues/${seg(s.queue)}`)}">${s.queue}</a></td><td><code>${when(s)}</code></td>
<td>${missedText(s.missed)}</td><td class="next-at">${time(s.nextAt)}</td><td>${time(s.lastAt)}</td><td>${time(s.updatedAt)}</td>
<td>${actionForm(ctx, `/schedules/${seg(s.name)}/remove`, 'Remove')}</td></tr>`;
}

/** Every schedule (`schedules().list()`): queue, pattern, missed-tick policy, next and last tick; remove. */
export async function schedulesPage(ctx: PageContext): Promise<Page> {
  const list = await ctx.taskrow.schedules().list();
  const table =
    list.length === 0
      ? html`<p class="muted">No schedule. Create them with <code>taskrow.schedules().upsert()</code>.</p>`
      : html`<table class="schedules"><thead><tr><th>schedule</th><th>queue</th><th>when</th><th>missed ticks</th><th>next tick</th><th>last tick</th><th>updated</th><th></th></tr></thead>
<tbody>${list.map((s) => row(ctx, s))}</tbody></table>`;
  return {
    title: 'Schedules',
    body: html`<h1>Schedules</h1><div class="card">${table}</div>
<p class="muted">A scheduler (<code>schedules().start()</code> or <code>runDue()</code>) enqueues one job per tick; this page only reads and removes schedules.</p>`,
  };
}
