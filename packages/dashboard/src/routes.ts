import type { Page, PageContext } from './context.js';
import type { DashboardSettings } from './options.js';
import { donesPage } from './pages/dones.js';
import { jobPage } from './pages/job.js';
import { loopPage } from './pages/loop.js';
import { overviewPage } from './pages/overview.js';
import { queuePage } from './pages/queue.js';
import { resourcesPage } from './pages/resources.js';
import { schedulesPage } from './pages/schedules.js';

/** A GET page: its path pattern (captures are the params) and its renderer. */
export interface Route {
  readonly pattern: RegExp;
  render(ctx: PageContext, settings: DashboardSettings): Promise<Page>;
}

const SEG = '([^/]+)';

/** Every page. Captured segments are decoded, then validated by core when they are used. */
export const PAGES: readonly Route[] = [
  { pattern: /^\/?$/, render: overviewPage },
  { pattern: new RegExp(`^/queues/${SEG}$`), render: queuePage },
  { pattern: new RegExp(`^/queues/${SEG}/jobs/${SEG}$`), render: jobPage },
  { pattern: new RegExp(`^/loops/${SEG}$`), render: loopPage },
  { pattern: new RegExp(`^/dones/${SEG}$`), render: donesPage },
  { pattern: /^\/resources$/, render: resourcesPage },
  { pattern: /^\/schedules$/, render: schedulesPage },
];

/** The route matching `path` and its decoded captures, or undefined. */
export function match<R extends { pattern: RegExp }>(routes: readonly R[], path: string): { route: R; params: string[] } | undefined {
  for (const route of routes) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    try {
      return { route, params: m.slice(1).map((s) => decodeURIComponent(s)) };
    } catch {
      return undefined;
    }
  }
  return undefined;
}
