import type { IncomingMessage } from 'node:http';
import { actorOf, audit } from '../audit.js';
import type { Page, PageContext } from '../context.js';
import { html } from '../html/escape.js';
import type { DashboardSettings } from '../options.js';
import { Refused } from '../refused.js';
import type { Sessions } from '../session.js';
import { checkAction } from './check.js';
import { confirmPage } from './confirm.js';
import { DEAD_ACTIONS } from './dead.js';
import { PENDING_ACTIONS } from './pending.js';
import { QUEUE_ACTIONS } from './queue.js';
import { RESOURCE_ACTIONS } from './resources.js';
import { SCHEDULE_ACTIONS } from './schedule.js';
import type { Action } from './types.js';

export { checkAction, READ_ONLY } from './check.js';
export type { Action } from './types.js';

/** Every POST action. */
export const ACTIONS: readonly Action[] = [...DEAD_ACTIONS, ...PENDING_ACTIONS, ...QUEUE_ACTIONS, ...SCHEDULE_ACTIONS, ...RESOURCE_ACTIONS];

/** Where Cancel on a confirmation page leads: the page the form was posted from, when it is the dashboard's. */
function backOf(req: IncomingMessage, ctx: PageContext): string {
  try {
    const from = new URL(String(req.headers.referer ?? ''));
    const base = ctx.link('');
    if (from.host === req.headers.host && from.pathname.startsWith(base)) return `${from.pathname.slice(base.length) || '/'}${from.search}`;
  } catch {
    // no usable Referer: back to the overview
  }
  return '/';
}

/**
 * Runs the action `action` for a POST to `path`: MUST pass `checkAction` first (a refusal is
 * logged at warn with its reason and nothing runs); an action with a question shows the
 * confirmation page until the form says `confirmed=1`; a performed action is logged at info
 * (who, what, when) and answered with a page saying what it did.
 */
export async function performAction(
  req: IncomingMessage,
  ctx: PageContext,
  settings: DashboardSettings,
  sessions: Sessions | undefined,
  action: Action,
  path: string,
): Promise<Page> {
  const checked = await checkAction(req, sessions).catch((err: unknown) => {
    if (err instanceof Refused)
      audit(
        settings.logger,
        'warn',
        actorOf(req, undefined),
        action.name,
        { path, status: err.status, reason: err.message },
        `taskrow dashboard: refused ${action.name}`,
      );
    throw err;
  });
  const input = { ctx: { ...ctx, actions: { loginNeeded: false, csrf: sessions!.csrf(checked.sid) } }, settings, form: checked.form };
  const question = action.confirm?.(input);
  if (question !== undefined && checked.form.get('confirmed') !== '1') return confirmPage(input.ctx, path, question, checked.form, backOf(req, ctx));
  const outcome = await action.run(input);
  audit(settings.logger, 'info', actorOf(req, checked.sid), action.name, outcome.details, `taskrow dashboard: ${outcome.what}`);
  const body = html`<h1>${outcome.title}</h1><p class="notice action-result">${outcome.what}</p><p><a href="${ctx.link(outcome.back)}">Back</a></p>`;
  return { title: outcome.title, body, refresh: 0 };
}
