import type { Page, PageContext } from '../context.js';
import { html, raw, type Html } from './escape.js';
import { STYLE } from './style.js';

/**
 * The refresh script: every `data-refresh` milliseconds it fetches the same URL as a fragment and
 * replaces the content, leaving the page (scroll, open forms) in place; while a fetch fails it
 * shows the banner with the server's message (as text), and hides it on the next success. One
 * fetch at a time; none while a form field has the focus or a job is ticked. It also keeps the
 * "N selected" count of ticked jobs (and the tick-all box) up to date.
 */
const REFRESH = `(function () {
  var main = document.getElementById('content');
  function picked() { return document.querySelectorAll('input.pick:checked').length; }
  document.addEventListener('change', function (e) {
    var t = e.target;
    if (t.classList.contains('pick-all')) document.querySelectorAll('input.pick').forEach(function (b) { b.checked = t.checked; });
    if (!t.classList.contains('pick') && !t.classList.contains('pick-all')) return;
    document.querySelectorAll('.pick-count').forEach(function (c) { c.textContent = picked() + ' selected'; });
  });
  var banner = document.getElementById('banner');
  var every = Number(main.getAttribute('data-refresh'));
  if (!every) return;
  function busy() { var a = document.activeElement; return picked() > 0 || (a && /^(INPUT|SELECT|TEXTAREA)$/.test(a.tagName)); }
  function fail(text) { banner.textContent = text; banner.hidden = false; }
  var running = false;
  async function tick() {
    if (busy() || running) return;
    running = true;
    try {
      var r = await fetch(location.href, { headers: { 'X-Taskrow-Fragment': '1' }, cache: 'no-store', credentials: 'same-origin' });
      var t = await r.text();
      if (!r.ok) return fail('The dashboard could not read the database (' + r.status + '): ' + t.slice(0, 300) + ' Retrying.');
      main.innerHTML = t;
      banner.hidden = true;
      document.body.setAttribute('data-refreshed', String(Date.now()));
    } catch (e) { fail('The dashboard cannot be reached. Retrying.'); }
    finally { running = false; }
  }
  setInterval(tick, every);
})();`;

function nav(ctx: PageContext): Html {
  const a = ctx.actions;
  const session =
    a === undefined
      ? ''
      : a.loginNeeded
        ? html`<a href="${ctx.link('/login')}">Enable actions</a>`
        : html`<form method="post" action="${ctx.link('/logout')}" class="inline"><input type="hidden" name="csrf" value="${a.csrf}"><button>Log out</button></form>`;
  return html`<nav><a class="brand" href="${ctx.link('/')}">taskrow</a><a href="${ctx.link('/')}">Overview</a><a href="${ctx.link('/schedules')}">Schedules</a><a href="${ctx.link('/resources')}">Resources</a><a href="${ctx.link('/metrics')}">Metrics</a><span class="grow"></span>${session}</nav>`;
}

/** A whole HTML document around `page`; `error` shows the banner from the start. */
export function document(page: Page, ctx: PageContext, nonce: string, refreshInterval: number, error?: string): string {
  const every = page.refresh ?? refreshInterval;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · taskrow</title><style nonce="${nonce}">${raw(STYLE)}</style></head>
<body>${nav(ctx)}<div id="banner" class="banner" role="alert"${raw(error === undefined ? ' hidden' : '')}>${error ?? ''}</div>
<main id="content" data-refresh="${every}">${page.body}</main>
<script nonce="${nonce}">${raw(REFRESH)}</script></body></html>`.text;
}
