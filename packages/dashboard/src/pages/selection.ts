import type { JobInfo, JobState } from '@taskrow/core';
import type { PageContext } from '../context.js';
import { html, type Html } from '../html/escape.js';

/** The states a job can be ticked in: not started (Delete, Run now) or dead (Retry, Delete). */
const PICKABLE: ReadonlySet<JobState> = new Set(['ready', 'delayed', 'blocked', 'dead']);
const PENDING: ReadonlySet<JobState> = new Set(['ready', 'delayed', 'blocked']);

const picking = (ctx: PageContext): boolean => ctx.actions !== undefined && !ctx.actions.loginNeeded;

/** A row's tick box cell: ready, delayed, blocked and dead jobs get a box; none when actions are not usable. */
export function pick(ctx: PageContext, j: JobInfo): Html | string {
  if (!picking(ctx)) return '';
  return html`<td>${PICKABLE.has(j.state) ? html`<input type="checkbox" class="pick" name="id" value="${j.id}" form="selection" aria-label="select job ${j.id}">` : ''}</td>`;
}

/** The header cell that ticks every box on the page; none when actions are not usable. */
export function pickAll(ctx: PageContext): Html | string {
  return picking(ctx) ? html`<th><input type="checkbox" class="pick-all" aria-label="select every job on this page that can be acted on"></th>` : '';
}

/**
 * The form the ticked jobs belong to: their count, and a button per action that fits the jobs on
 * the page (dead: retry or delete; not started: delete; delayed: run now). Each goes to the
 * confirmation page first; none is shown when actions are not usable.
 */
export function selectionForm(ctx: PageContext, path: string, jobs: readonly JobInfo[]): Html | string {
  const a = ctx.actions;
  if (!a || a.loginNeeded || !jobs.some((j) => PICKABLE.has(j.state))) return '';
  const dead = jobs.some((j) => j.state === 'dead')
    ? html` <button name="op" value="retry">Retry selected dead</button> <button name="op" value="delete">Delete selected dead</button>`
    : '';
  const pending = jobs.some((j) => PENDING.has(j.state))
    ? html` <button class="remove" formaction="${ctx.link(`${path}/remove`)}">Delete selected</button>`
    : '';
  const delayed = jobs.some((j) => j.state === 'delayed')
    ? html` <button class="promote" formaction="${ctx.link(`${path}/promote`)}">Run selected now</button>`
    : '';
  return html`<form method="post" action="${ctx.link(`${path}/selected`)}" id="selection" class="selection"><input type="hidden" name="csrf" value="${a.csrf}">
<span class="pick-count">0 selected</span>${dead}${pending}${delayed}</form>`;
}
