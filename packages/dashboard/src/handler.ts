import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TaskrowError } from '@taskrow/core';
import { ACTIONS, performAction } from './actions/index.js';
import { linker, type ActionsView, type Page, type PageContext } from './context.js';
import { html } from './html/escape.js';
import { document } from './html/layout.js';
import { securityHeaders, send } from './http.js';
import { loginPage, postLogin, postLogout } from './login.js';
import { registerTaskrowMetrics } from './metrics/collector.js';
import { dashboardSettings, type DashboardOptions, type DashboardSettings } from './options.js';
import { Refused } from './refused.js';
import { match, PAGES } from './routes.js';
import { Sessions } from './session.js';

const HTML = 'text/html; charset=utf-8';
const HEADINGS: Record<number, string> = { 503: 'The database cannot be read', 404: 'Not found', 413: 'Form too large', 421: 'Wrong host name' };

/** The status and message for an error met while serving: bad input 400, unknown 404, else the database (503). */
function classify(err: unknown): { status: number; message: string } {
  if (err instanceof Refused) return { status: err.status, message: err.message };
  if (err instanceof TaskrowError && ['INVALID_ARGUMENT', 'INVALID_NAME', 'INVALID_KEY'].includes(err.code)) return { status: 400, message: err.message };
  if (err instanceof TaskrowError && err.code === 'NOT_FOUND') return { status: 404, message: err.message };
  const e = err as { code?: unknown; message?: unknown };
  return { status: 503, message: `database unavailable: ${String(e.message ?? err)}${typeof e.code === 'string' ? ` [${e.code}]` : ''}` };
}

interface Request {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly ctx: PageContext;
  readonly nonce: string;
  readonly fragment: boolean;
}

function respond(r: Request, settings: DashboardSettings, page: Page, status = 200, error?: string): void {
  if (r.fragment) send(r.res, status, HTML, page.body.text);
  else send(r.res, status, HTML, document(page, r.ctx, r.nonce, settings.refreshInterval, error));
}

/** Answers an error: a fragment request gets the message as text (the banner shows it), a page the error page. */
function fail(r: Request, settings: DashboardSettings, err: unknown): void {
  const { status, message } = classify(err);
  if (r.fragment) {
    send(r.res, status, 'text/plain; charset=utf-8', message);
    return;
  }
  const heading = HEADINGS[status] ?? 'Refused';
  const body = html`<h1>${heading}</h1><p class="error-message">${message}</p>`;
  respond(r, settings, { title: `Error ${status}`, body, refresh: status === 503 ? undefined : 0 }, status, status === 503 ? message : undefined);
}

async function route(
  r: Request,
  settings: DashboardSettings,
  sessions: Sessions | undefined,
  metrics: () => Promise<{ type: string; body: string }>,
  path: string,
): Promise<void> {
  const method = r.req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') {
    if (path === '/metrics') {
      const m = await metrics();
      return send(r.res, 200, m.type, m.body);
    }
    if (path === '/login' && sessions) return respond(r, settings, loginPage(r.ctx));
    const found = match(PAGES, path);
    if (!found) return fail(r, settings, new TaskrowError('NOT_FOUND', `no page ${JSON.stringify(path)}`));
    const page = await found.route.render({ ...r.ctx, params: found.params }, settings);
    return respond(r, settings, page);
  }
  if (method !== 'POST') return send(r.res, 405, 'text/plain', 'method not allowed', { Allow: 'GET, HEAD, POST' });
  if (path === '/login') return postLogin(r.req, r.res, r.ctx, sessions, (page, status) => respond(r, settings, page, status));
  if (path === '/logout') return postLogout(r.req, r.res, r.ctx, sessions);
  const found = match(ACTIONS, path);
  if (!found) throw new TaskrowError('NOT_FOUND', `no action ${JSON.stringify(path)}`);
  return respond(r, settings, await performAction(r.req, { ...r.ctx, params: found.params }, settings, sessions, found.route, path));
}

/** The path below `basePath` (`/` for the base itself), or undefined for a path outside it. */
function pathUnder(pathname: string, basePath: string): string | undefined {
  if (pathname !== basePath && !pathname.startsWith(`${basePath}/`)) return undefined;
  return pathname.slice(basePath.length) || '/';
}

/** The 421 refusal of a request for a host name the dashboard was not told it has. */
function misdirected(host: string | undefined): Refused {
  const name = JSON.stringify(String(host ?? '').slice(0, 100));
  return new Refused(421, `This dashboard does not answer to the host name ${name}. Add it to the allowedHosts option if it is yours.`);
}

function actionsView(req: IncomingMessage, sessions: Sessions | undefined): ActionsView | undefined {
  if (!sessions) return undefined;
  const sid = sessions.sessionOf(req);
  return { loginNeeded: sid === undefined, csrf: sid === undefined ? '' : sessions.csrf(sid) };
}

/**
 * The dashboard as a plain `node:http` request handler, for `http.createServer(handler)` or for
 * mounting in Express, Fastify or Hono (see the README). Pages are rendered on the server from
 * taskrow's read APIs, every database value escaped; they refresh themselves without a reload and
 * show a banner while the database cannot be read. `/metrics` serves the Prometheus text format.
 * Actions (pause / resume a queue, retry / delete dead jobs, remove a schedule, force-release a
 * key) exist only when `actions.token` is given, and then MUST pass the same-origin, session and
 * CSRF checks; each is logged. A request whose `Host` is not an allowed name MUST get 421 before
 * anything is read. Throws `INVALID_ARGUMENT` on bad or unknown options, naming the option and
 * the accepted names.
 */
export function dashboardHandler(options: DashboardOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const settings = dashboardSettings(options);
  const sessions = settings.token === undefined ? undefined : new Sessions(settings.token);
  const registry = registerTaskrowMetrics({ taskrow: settings.taskrow });
  const metrics = async () => ({ type: registry.contentType, body: await registry.metrics() });
  const link = linker(settings.basePath);
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
    const nonce = randomBytes(16).toString('base64');
    securityHeaders(res, nonce);
    const ctx: PageContext = { taskrow: settings.taskrow, url, params: [], link, actions: actionsView(req, sessions) };
    const r: Request = { req, res, ctx, nonce, fragment: req.headers['x-taskrow-fragment'] === '1' };
    const path = pathUnder(url.pathname, settings.basePath);
    const work = !settings.hostAllowed(req.headers.host)
      ? Promise.reject(misdirected(req.headers.host))
      : path !== undefined
        ? route(r, settings, sessions, metrics, path)
        : Promise.reject(new TaskrowError('NOT_FOUND', `outside ${settings.basePath}`));
    work.catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else fail(r, settings, err);
    });
  };
}
