import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';
import type { Taskrow } from '@taskrow/core';
import { taskrow } from '@taskrow/mysql2';
import type { ServerTarget } from '@taskrow/servers';
import { dashboardHandler, type DashboardOptions } from '../src/index.js';

/** Debian's Chromium; the tests never download a browser. */
export const CHROMIUM = '/usr/bin/chromium';
const CI = process.env['CI'] === 'true' || process.env['CI'] === '1';

/**
 * Whether the browser tests run: they need Debian's Chromium (`scripts/setup.sh` installs it).
 * Under CI=true a missing browser MUST fail the run, never skip it.
 */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (CI) throw new Error(`${CHROMIUM} is missing: run scripts/setup.sh (apt-get install -y chromium); under CI=true this is a failure, not a skip`);
  process.stderr.write(`dashboard tests: ${CHROMIUM} is missing, browser tests skipped (apt-get install -y chromium)\n`);
  return false;
}

/** The first server of the run (from the shared global setup). */
export const target = (): ServerTarget => inject('targets')[0]!;

/** A fresh table prefix per test file, a taskrow over a mysql2 pool, and a probe connection. */
export interface Db {
  readonly tr: Taskrow;
  readonly pool: mysql.Pool;
  readonly probe: mysql.Connection;
  readonly prefix: string;
  /** Rows of a probe query (a side channel, not the dashboard's reads). */
  rows(sql: string, params?: unknown[]): Promise<mysql.RowDataPacket[]>;
  close(): Promise<void>;
}

export async function openDb(tag: string): Promise<Db> {
  const url = target().url;
  const prefix = `d${tag}${process.pid % 100000}_`;
  const pool = mysql.createPool({ uri: url, connectionLimit: 6 });
  const probe = await mysql.createConnection(url);
  const tr = await taskrow(pool, { prefix });
  await tr.migrate();
  const rows = async (sql: string, params: unknown[] = []) => (await probe.query<mysql.RowDataPacket[]>(sql, params))[0];
  return {
    tr,
    pool,
    probe,
    prefix,
    rows,
    async close() {
      const tables = await rows('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?', [`${prefix}%`]);
      for (const t of tables) await probe.query(`DROP TABLE \`${String(t['t'])}\``);
      await tr.close();
      await pool.end();
      await probe.end();
    },
  };
}

/** A dashboard on a loopback port; `url(path)` is its address. */
export interface Served {
  readonly server: Server;
  readonly base: string;
  url(path: string): string;
  close(): Promise<void>;
}

export async function serve(options: DashboardOptions, basePath = ''): Promise<Served> {
  const server = createServer(dashboardHandler({ ...options, basePath }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const base = `http://127.0.0.1:${port}${basePath}`;
  return {
    server,
    base,
    url: (path) => `${base}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Debian's Chromium, headless, in a fresh profile, with every background network feature off
 * (the machine has no network besides loopback). Records alert dialogs in `dialogs`.
 */
export async function openBrowser(): Promise<{ context: BrowserContext; dialogs: string[]; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrow-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const dialogs: string[] = [];
  const watch = (p: Page): void =>
    void p.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  context.pages().forEach(watch);
  context.on('page', watch);
  return {
    context,
    dialogs,
    async close() {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Clicks something that navigates and waits until the new page has loaded (never reads a half-parsed page). */
export async function clickLoad(page: Page, selector: string): Promise<void> {
  await page.click(selector);
  await page.waitForLoadState('load');
}

/** Enables actions in the browser: gives `token` on the login page and waits for the overview. */
export async function login(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/login`);
  await page.fill('input[name=token]', token);
  await clickLoad(page, 'form.login button');
  await page.waitForURL(`${base}/`);
}

/** A logger that records what the dashboard logs, by level. */
export function recordingLogger(): { entries: { level: string; obj: Record<string, unknown>; msg: string | undefined }[] } & Record<
  'debug' | 'info' | 'warn' | 'error',
  (obj: object, msg?: string) => void
> {
  const entries: { level: string; obj: Record<string, unknown>; msg: string | undefined }[] = [];
  const at = (level: string) => (obj: object, msg?: string) => void entries.push({ level, obj: obj as Record<string, unknown>, msg });
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** An operator's session: a database, a dashboard with actions (logged to `logger`), a read-only one, and a logged-in page. */
export interface Operator {
  readonly db: Db;
  readonly web: Served;
  readonly readOnly: Served;
  readonly browser: Awaited<ReturnType<typeof openBrowser>>;
  readonly page: Page;
  close(): Promise<void>;
}

/**
 * Opens an `Operator` session: a database tagged `tag`, the dashboard at `basePath` with actions
 * under `token` (pages refresh only once a minute, so a test's clicks are not raced), a read-only
 * dashboard, and a Chromium page logged in to the first. `close()` ends them all.
 */
export async function openOperator(
  tag: string,
  token: string,
  loggers: { logger: ReturnType<typeof recordingLogger>; readOnlyLogger: ReturnType<typeof recordingLogger> },
  basePath = '',
): Promise<Operator> {
  const db = await openDb(tag);
  const web = await serve({ taskrow: db.tr, actions: { token }, refreshInterval: 60_000, logger: loggers.logger }, basePath);
  const readOnly = await serve({ taskrow: db.tr, logger: loggers.readOnlyLogger });
  const browser = await openBrowser();
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  await login(page, web.base, token);
  return {
    db,
    web,
    readOnly,
    browser,
    page,
    async close() {
      await browser.close();
      await web.close();
      await readOnly.close();
      await db.close();
    },
  };
}
