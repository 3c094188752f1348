import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkAction, READ_ONLY } from './actions/index.js';
import type { Page, PageContext } from './context.js';
import { html } from './html/escape.js';
import { readForm, sameOrigin, send } from './http.js';
import { Refused } from './refused.js';
import { COOKIE, type Sessions } from './session.js';

/** The form that takes the actions token. */
export function loginPage(ctx: PageContext, error?: string): Page {
  return {
    title: 'Enable actions',
    refresh: 0,
    body: html`<h1>Enable actions</h1>${error === undefined ? '' : html`<p class="notice bad login-error">${error}</p>`}
<div class="card"><form method="post" action="${ctx.link('/login')}" class="login"><label>Actions token <input type="password" name="token" autocomplete="off" required></label> <button>Enable</button></form>
<p class="muted">The token the dashboard was started with. It is checked once; this browser then holds a session cookie (HttpOnly, SameSite=Strict).</p></div>`,
  };
}

function cookie(ctx: PageContext, value: string, maxAge: number): string {
  const path = ctx.link('') || '/';
  return `${COOKIE}=${value}; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
}

/**
 * Checks the token given in the login form (same origin only) and starts a session; a wrong token
 * shows the form again with 403. MUST NOT start a session for a wrong token.
 */
export async function postLogin(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: PageContext,
  sessions: Sessions | undefined,
  render: (page: Page, status: number) => void,
): Promise<void> {
  if (!sessions) throw new Refused(403, READ_ONLY);
  if (!sameOrigin(req)) throw new Refused(403, 'refused: the request does not come from the dashboard itself (Origin / Referer check)');
  const form = await readForm(req);
  if (!sessions.tokenMatches(form.get('token') ?? '')) return render(loginPage(ctx, 'That is not the actions token.'), 403);
  send(res, 303, 'text/plain', 'actions enabled', { Location: ctx.link('/'), 'Set-Cookie': cookie(ctx, sessions.create(), 12 * 3600) });
}

/** Ends the session (a CSRF-checked POST). */
export async function postLogout(req: IncomingMessage, res: ServerResponse, ctx: PageContext, sessions: Sessions | undefined): Promise<void> {
  await checkAction(req, sessions);
  send(res, 303, 'text/plain', 'logged out', { Location: ctx.link('/'), 'Set-Cookie': cookie(ctx, '', 0) });
}
