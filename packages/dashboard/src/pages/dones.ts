import type { Page, PageContext } from '../context.js';
import { seg } from '../context.js';
import { html } from '../html/escape.js';
import { count, time } from '../html/format.js';
import type { DashboardSettings } from '../options.js';
import { pager } from './parts.js';

/** Keys per page on a Dones namespace page. */
export const KEYS_PER_PAGE = 100;

/** One Dones namespace: its (capped) count and a page of keys with `markedAt`, paged by cursor. */
export async function donesPage(ctx: PageContext, settings: DashboardSettings): Promise<Page> {
  const dones = ctx.taskrow.dones(ctx.params[0]!);
  const found = await ctx.taskrow.inspect().donesNamespace(dones.namespace, { countLimit: settings.countLimit });
  const page = await dones.list({ limit: KEYS_PER_PAGE, after: ctx.url.searchParams.get('after') ?? undefined });
  const rows = page.entries.map((e) => html`<tr><td><pre>${e.key}</pre></td><td>${time(e.markedAt)}</td></tr>`);
  const table =
    rows.length === 0
      ? html`<p class="muted">No done keys.</p>`
      : html`<table class="keys"><thead><tr><th>key</th><th>marked at</th></tr></thead><tbody>${rows}</tbody></table>`;
  return {
    title: `Dones ${dones.namespace}`,
    body: html`<h1>Dones ${dones.namespace}</h1><p>Done keys: <strong>${found ? count(found.count) : '0'}</strong></p>
<div class="card">${table}${pager(ctx, `/dones/${seg(dones.namespace)}`, {}, 'after', page.next)}</div>`,
  };
}
