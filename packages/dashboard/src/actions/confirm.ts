import type { Page, PageContext } from '../context.js';
import { html } from '../html/escape.js';

/**
 * The confirmation step of an action: the question, and a form that posts the same fields again
 * with `confirmed=1` (and this session's CSRF token), or Cancel back to where the operator was.
 */
export function confirmPage(ctx: PageContext, path: string, question: string, form: URLSearchParams, back: string): Page {
  const csrf = ctx.actions?.csrf ?? '';
  const fields = [...form].filter(([k]) => k !== 'csrf' && k !== 'confirmed').map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return {
    title: 'Confirm',
    refresh: 0,
    body: html`<h1>Confirm</h1><div class="card"><p class="confirm-question">${question}</p>
<form method="post" action="${ctx.link(path)}" class="confirm"><input type="hidden" name="csrf" value="${csrf}">${fields}<input type="hidden" name="confirmed" value="1">
<button class="danger">Confirm</button> <a class="cancel" href="${ctx.link(back)}">Cancel</a></form></div>`,
  };
}
