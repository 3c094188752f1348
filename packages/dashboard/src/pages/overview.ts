import type { LoopStats } from '@taskrow/core';
import { seg, type Page, type PageContext } from '../context.js';
import { html, type Html } from '../html/escape.js';
import { count, num, time } from '../html/format.js';
import type { DashboardSettings } from '../options.js';
import { pager, queueTable, runningTable } from './parts.js';

async function loopsPart(ctx: PageContext): Promise<Html> {
  const page = await ctx.taskrow.inspect().loops({ after: ctx.url.searchParams.get('loops_after') ?? undefined, limit: 50 });
  if (page.items.length === 0) return html`<p class="muted">No loop was created.</p>`;
  const rows: Html[] = [];
  for (const l of page.items) {
    const s: LoopStats = await ctx.taskrow.loop(l.name).stats();
    rows.push(html`<tr><td><a href="${ctx.link(`/loops/${seg(l.name)}`)}">${l.name}</a></td><td>${l.idType}</td>
<td class="n">${num(s.locked)}</td><td class="n">${num(s.bumped)}</td><td>${String(s.minId ?? '—')}</td><td>${String(s.maxId ?? '—')}</td></tr>`);
  }
  return html`<table class="loops"><thead><tr><th>loop</th><th>id type</th><th class="n">locked</th><th class="n">bumped</th><th>min id</th><th>max id</th></tr></thead>
<tbody>${rows}</tbody></table>${pager(ctx, '/', {}, 'loops_after', page.next)}`;
}

async function donesPart(ctx: PageContext, settings: DashboardSettings): Promise<Html> {
  const after = ctx.url.searchParams.get('dones_after') ?? undefined;
  const page = await ctx.taskrow.inspect().donesNamespaces({ after, limit: 50, countLimit: settings.countLimit });
  if (page.items.length === 0) return html`<p class="muted">No Dones namespace.</p>`;
  const rows = page.items.map(
    (d) =>
      html`<tr><td><a href="${ctx.link(`/dones/${seg(d.name)}`)}">${d.name}</a></td><td class="n">${count(d.count)}</td><td>${time(d.createdAt)}</td></tr>`,
  );
  return html`<table class="dones"><thead><tr><th>namespace</th><th class="n">done keys</th><th>created</th></tr></thead><tbody>${rows}</tbody></table>
${pager(ctx, '/', {}, 'dones_after', page.next)}`;
}

/** The overview: every queue, loop and Dones namespace (paged by 50), and running Resources jobs. */
export async function overviewPage(ctx: PageContext, settings: DashboardSettings): Promise<Page> {
  const queues = await ctx.taskrow
    .inspect()
    .queues({ after: ctx.url.searchParams.get('queues_after') ?? undefined, limit: 50, countLimit: settings.countLimit });
  const running = await settings.resources(ctx.taskrow).running();
  return {
    title: 'Overview',
    body: html`<h1>Overview</h1>
<h2>Queues</h2><div class="card">${queueTable(ctx, queues.items)}${pager(ctx, '/', {}, 'queues_after', queues.next)}</div>
<h2>Loops</h2><div class="card">${await loopsPart(ctx)}</div>
<h2>Dones namespaces</h2><div class="card">${await donesPart(ctx, settings)}</div>
<h2>Running Resources jobs</h2><div class="card">${runningTable(ctx, running)}</div>`,
  };
}
