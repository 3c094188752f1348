import type { IncomingMessage } from 'node:http';
import { readForm, sameOrigin } from '../http.js';
import { Refused } from '../refused.js';
import { same, type Sessions } from '../session.js';

/** An action request that passed every check: its form and the session that sent it. */
export interface Checked {
  readonly form: URLSearchParams;
  readonly sid: string;
}

/** The message of every action refused because the dashboard is read-only. */
export const READ_ONLY = 'This dashboard is read-only: start it with an actions token (actions: { token }) to enable actions.';

/**
 * The checks every action passes before it runs: actions are on; the request comes from the
 * dashboard's own origin; the browser holds a session made with the token; the form carries that
 * session's CSRF token. MUST refuse (403) when any fails, before reading the database.
 */
export async function checkAction(req: IncomingMessage, sessions: Sessions | undefined): Promise<Checked> {
  if (!sessions) throw new Refused(403, READ_ONLY);
  if (!sameOrigin(req)) throw new Refused(403, 'refused: the request does not come from the dashboard itself (Origin / Referer check)');
  const sid = sessions.sessionOf(req);
  if (!sid) throw new Refused(403, 'refused: give the actions token first (Enable actions)');
  const form = await readForm(req);
  if (!same(form.get('csrf') ?? '', sessions.csrf(sid))) throw new Refused(403, "refused: the form is missing this session's CSRF token (reload the page)");
  return { form, sid };
}
