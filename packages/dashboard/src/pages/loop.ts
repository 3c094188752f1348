import type { Page, PageContext } from '../context.js';
import { html } from '../html/escape.js';
import { duration, num } from '../html/format.js';

/** A loop's `stats()` (doloop's), in one table. */
export async function loopPage(ctx: PageContext): Promise<Page> {
  const loop = ctx.taskrow.loop(ctx.params[0]!);
  const s = await loop.stats();
  const row = (label: string, value: string) => html`<dt>${label}</dt><dd>${value}</dd>`;
  const sec = (n: number): string => duration(n);
  return {
    title: `Loop ${loop.name}`,
    body: html`<h1>Loop ${loop.name}</h1><div class="card"><dl class="loop-stats">
${row('locked ids', num(s.locked))}${row('bumped ids', num(s.bumped))}
${row('min id', String(s.minId ?? '—'))}${row('max id', String(s.maxId ?? '—'))}
${row('lock time left (min / max)', `${sec(s.minLockTime)} / ${sec(s.maxLockTime)}`)}
${row('bumped for (min / max)', `${sec(s.minBumpTime)} / ${sec(s.maxBumpTime)}`)}
${row('since updated (min / max)', `${sec(s.minUpdateTime)} / ${sec(s.maxUpdateTime)}`)}
</dl></div>`,
  };
}
