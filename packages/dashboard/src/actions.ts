import type { IncomingMessage } from 'node:http';
import { seg, type Page, type PageContext } from './context.js';
import { html } from './html/escape.js';
import { readForm, sameOrigin } from './http.js';
import type { DashboardSettings } from './options.js';
import { jobId } from './pages/job.js';
import type { Sessions } from './session.js';

/** An action refused before it ran: the status and why. */
export class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The parsed form of an action that passed every check. */
interface Checked {
  readonly form: URLSearchParams;
}

/**
 * The checks every action passes before it runs: actions are on; the request comes from the
 * dashboard's own origin; the browser holds a session made with the token; the form carries that
 * session's CSRF token. MUST refuse (403) when any fails, before reading the database.
 */
export async function checkAction(req: IncomingMessage, sessions: Sessions | undefined): Promise<Checked> {
  if (!sessions) throw new Refused(403, 'actions are off: start the dashboard with an actions token to enable them');
  if (!sameOrigin(req)) throw new Refused(403, 'refused: the request does not come from the dashboard itself (Origin / Referer check)');
  const sid = sessions.sessionOf(req);
  if (!sid) throw new Refused(403, 'refused: give the actions token first (Enable actions)');
  const form = await readForm(req).catch((e: Error) => {
    throw new Refused(400, e.message);
  });
  const csrf = form.get('csrf') ?? '';
  if (csrf !== sessions.csrf(sid)) throw new Refused(403, "refused: the form is missing this session's CSRF token (reload the page)");
  return { form };
}

function done(ctx: PageContext, title: string, what: string, back: string): Page {
  return { title, body: html`<h1>${title}</h1><p class="notice action-result">${what}</p><p><a href="${ctx.link(back)}">Back</a></p>`, refresh: 0 };
}

/** Runs one checked action and describes what it did. MUST run only after `checkAction`. */
export async function runAction(ctx: PageContext, settings: DashboardSettings, action: string, form: URLSearchParams): Promise<Page> {
  if (action === 'force-release') {
    const key = form.get('key') ?? '';
    const inputs = form.get('inputs') === '1' ? [key] : [];
    const outputs = form.get('outputs') === '1' ? [key] : [];
    const n = await settings.resources(ctx.taskrow).forceRelease({ inputs, outputs });
    return done(ctx, 'Force-release', `Removed ${n} lock(s) on key ${JSON.stringify(key)}.`, '/resources');
  }
  const queue = ctx.taskrow.queue(ctx.params[0]!);
  const idText = form.get('id');
  const ids = idText === null ? undefined : [jobId(idText)];
  const which = ids === undefined ? 'every dead job' : `dead job ${ids[0]}`;
  const back = ids === undefined ? `/queues/${seg(queue.name)}` : `/queues/${seg(queue.name)}/jobs/${ids[0]}`;
  if (action === 'retry-dead') {
    const n = await queue.retryDead(ids === undefined ? {} : { ids });
    return done(ctx, 'Retry dead jobs', `Queue ${queue.name}: made ${n} job(s) ready again (${which}).`, back);
  }
  const n = await queue.purgeDead(ids === undefined ? {} : { ids });
  return done(ctx, 'Delete dead jobs', `Queue ${queue.name}: deleted ${n} job(s) (${which}).`, `/queues/${seg(queue.name)}`);
}
