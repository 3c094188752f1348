import type { FlowEdge, TraversedEdge } from '@taskrow/core';
import type { Page, PageContext } from '../context.js';
import { flowSvg } from '../graph/svg.js';
import { layout } from '../graph/layout.js';
import { html, type Html } from '../html/escape.js';
import { num } from '../html/format.js';
import type { DashboardSettings } from '../options.js';
import { runningTable } from './parts.js';

/** Most edges drawn at once; a bigger history is drawn around a focus only. */
export const MAX_DRAWN_EDGES = 2000;

function forceReleaseForm(ctx: PageContext): Html {
  const a = ctx.actions;
  if (a === undefined) return html``;
  if (a.loginNeeded) return html`<p><a href="${ctx.link('/login')}">Enable actions</a> to force-release a key.</p>`;
  return html`<h2>Force-release a key</h2><div class="card"><form method="post" action="${ctx.link('/resources/force-release')}" class="force-release">
<input type="hidden" name="csrf" value="${a.csrf}"><label>key <input type="text" name="key" required maxlength="4096" size="40"></label>
<label><input type="checkbox" name="inputs" value="1" checked> reader locks</label> <label><input type="checkbox" name="outputs" value="1" checked> writer locks</label>
<button>Force-release</button></form><p class="muted">Removes the locks whoever holds them (jobs.py's force unlock); their holders see them lost.</p></div>`;
}

function traversalList(ctx: PageContext, title: string, edges: readonly TraversedEdge[], upstream: boolean): Html {
  if (edges.length === 0) return html`<h3>${title}</h3><p class="muted">Nothing.</p>`;
  const items = edges.map((e) => {
    const name = upstream ? e.from : e.to;
    return html`<li>${'· '.repeat(e.depth - 1)}<a href="${ctx.link('/resources', { focus: name })}">${name}</a> <span class="muted">(${e.kind}, depth ${e.depth})</span></li>`;
  });
  return html`<h3>${title}</h3><ul class="${upstream ? 'upstream' : 'downstream'}">${items}</ul>`;
}

async function graphPart(ctx: PageContext, settings: DashboardSettings, focus: string | undefined): Promise<Html> {
  const res = settings.resources(ctx.taskrow);
  let edges: FlowEdge[];
  let around = html``;
  if (focus !== undefined) {
    const up = await res.upstream(focus);
    const down = await res.downstream(focus);
    edges = [...up, ...down];
    around = html`<p>Focus: <strong class="focus-name">${focus}</strong> · <a href="${ctx.link('/resources')}">whole graph</a></p>
<div class="card traversal">${traversalList(ctx, 'Upstream', up, true)}${traversalList(ctx, 'Downstream', down, false)}</div>`;
  } else {
    edges = await res.edges();
  }
  if (edges.length === 0) return html`${around}<p class="muted">No flow history recorded${focus === undefined ? '' : ' around this name'}.</p>`;
  if (edges.length > MAX_DRAWN_EDGES) {
    return html`${around}<p class="notice">${num(edges.length)} edges: too many to draw at once (limit ${num(MAX_DRAWN_EDGES)}). Pick a key or job from the running jobs, or add <code>?focus=NAME</code>.</p>`;
  }
  const unique = new Map(edges.map((e) => [`${e.kind}\u0000${e.from}\u0000${e.to}`, e]));
  const svg = flowSvg(layout([...unique.values()]), (name) => ctx.link('/resources', { focus: name }), focus);
  return html`${around}<p class="muted">${num(unique.size)} edges. Click a key or a job to see what feeds it and what it feeds.</p><div class="card graph">${svg}</div>`;
}

/** Running Resources jobs, the flow graph (whole, or up / downstream of `?focus=`), and force-release. */
export async function resourcesPage(ctx: PageContext, settings: DashboardSettings): Promise<Page> {
  const focusParam = ctx.url.searchParams.get('focus');
  const focus = focusParam === null || focusParam === '' ? undefined : focusParam;
  const running = await settings.resources(ctx.taskrow).running();
  return {
    title: 'Resources',
    body: html`<h1>Resources</h1>
<h2>Running jobs</h2><div class="card">${runningTable(ctx, running)}</div>${forceReleaseForm(ctx)}
<h2>Flow graph</h2>${await graphPart(ctx, settings, focus)}`,
  };
}
