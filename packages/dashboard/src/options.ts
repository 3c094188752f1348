import { InvalidArgumentError, type Resources, type Taskrow, type WorkerLogger } from '@taskrow/core';
import { CONSOLE_LOGGER } from './audit.js';
import { hostCheck } from './hosts.js';

/** Options of `dashboardHandler`. */
export interface DashboardOptions {
  /** The taskrow to show (any adapter). */
  readonly taskrow: Taskrow;
  /**
   * Pause / resume queues, retry / delete dead jobs, remove schedules, force-release resource keys.
   * Default `false` (read-only). With a token (at least 16 characters), an operator enables actions
   * in a browser by giving the token once.
   */
  readonly actions?: { readonly token: string } | false;
  /** Where the handler is mounted, e.g. `/admin/taskrow`; default `''` (the root). */
  readonly basePath?: string;
  /** Milliseconds between page refreshes, 1,000 to 3,600,000; default 5,000. */
  readonly refreshInterval?: number;
  /** Counts on the pages stop at this many rows per state (shown as `N+`), 1 to 10,000,000; default 10,000. `/metrics` counts up to 1,000,000. */
  readonly countLimit?: number;
  /**
   * Host names the dashboard answers to besides `localhost`, `*.localhost` and IP addresses
   * (`'.example.com'` also allows its subdomains); `true` allows any. Other `Host` headers get 421.
   */
  readonly allowedHosts?: readonly string[] | true;
  /** Where actions and refused actions are logged (pino's interface); default one line each on the console. */
  readonly logger?: WorkerLogger;
}

/** Validated options. */
export interface DashboardSettings {
  readonly taskrow: Taskrow;
  readonly token: string | undefined;
  readonly basePath: string;
  readonly refreshInterval: number;
  readonly countLimit: number;
  /** True when a request's `Host` header names this dashboard. */
  hostAllowed(header: string | undefined): boolean;
  readonly logger: WorkerLogger;
  /** One read-only Resources handle per taskrow (no exit hooks). */
  resources(tr: Taskrow): Resources;
}

const ACCEPTED = ['taskrow', 'actions', 'basePath', 'refreshInterval', 'countLimit', 'allowedHosts', 'logger'] as const;
const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
const BASE = /^(\/[A-Za-z0-9._~-]+)*$/;

const bad = (message: string): InvalidArgumentError => new InvalidArgumentError('INVALID_ARGUMENT', message);

/** Refuses options not in `accepted`, naming the option and the accepted names. */
export function strict(what: string, options: unknown, accepted: readonly string[]): Record<string, unknown> {
  if (typeof options !== 'object' || options === null) throw bad(`${what} options must be an object, got ${options === null ? 'null' : typeof options}`);
  for (const k of Object.keys(options)) {
    if (!accepted.includes(k)) throw bad(`${what} has no option ${JSON.stringify(k)}; accepted: ${accepted.join(', ')}`);
  }
  return options as Record<string, unknown>;
}

/** A taskrow instance, checked by shape. */
export function taskrowOption(what: string, value: unknown): Taskrow {
  const t = value as Partial<Taskrow> | undefined;
  if (!t || typeof t.queue !== 'function' || typeof t.inspect !== 'function')
    throw bad(`${what} taskrow must be a taskrow instance (from an adapter's factory), got ${typeof value}`);
  return t as Taskrow;
}

/** An integer option in [min, max], or its default. */
export function intOption(what: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw bad(`${what} must be an integer from ${min} to ${max}, got ${typeof value === 'number' ? value : typeof value}`);
  }
  return value;
}

function tokenOf(actions: unknown): string | undefined {
  if (actions === undefined || actions === false) return undefined;
  const o = strict('dashboardHandler() actions', actions, ['token']);
  const token = o['token'];
  if (typeof token !== 'string' || token.length < 16 || token.length > 1024) {
    throw bad(
      `dashboardHandler() actions.token must be a string of 16 to 1024 characters, got ${typeof token === 'string' ? `${token.length} characters` : typeof token}`,
    );
  }
  return token;
}

/** A pino-compatible logger (every log method, where present, a function), or the console logger. */
function loggerOf(value: unknown): WorkerLogger {
  if (value === undefined) return CONSOLE_LOGGER;
  if (typeof value !== 'object' || value === null) throw bad(`dashboardHandler() logger must be an object with pino's methods, got ${String(value)}`);
  for (const level of LEVELS) {
    const m = (value as Record<string, unknown>)[level];
    if (m !== undefined && typeof m !== 'function') throw bad(`dashboardHandler() logger.${level} must be a function, got ${typeof m}`);
  }
  return value as WorkerLogger;
}

/** Validates `dashboardHandler` options. MUST refuse unknown names, naming them and the accepted names. */
export function dashboardSettings(options: DashboardOptions): DashboardSettings {
  const o = strict('dashboardHandler()', options, ACCEPTED);
  const basePath = o['basePath'] ?? '';
  if (typeof basePath !== 'string' || !BASE.test(basePath)) {
    throw bad(`dashboardHandler() basePath must be '' or a path like '/admin/taskrow' (no trailing slash), got ${JSON.stringify(basePath)}`);
  }
  const cache = new WeakMap<Taskrow, Resources>();
  return {
    taskrow: taskrowOption('dashboardHandler()', o['taskrow']),
    token: tokenOf(o['actions']),
    basePath,
    refreshInterval: intOption('dashboardHandler() refreshInterval', o['refreshInterval'], 5000, 1000, 3_600_000),
    countLimit: intOption('dashboardHandler() countLimit', o['countLimit'], 10_000, 1, 10_000_000),
    hostAllowed: hostCheck(o['allowedHosts']),
    logger: loggerOf(o['logger']),
    resources(tr) {
      let r = cache.get(tr);
      if (!r) cache.set(tr, (r = tr.resources({ releaseOnExit: false })));
      return r;
    },
  };
}
