import type { Taskrow } from '@taskrow/core';
import type { Html } from './html/escape.js';

/** What a logged-in operator's forms carry when actions are on. */
export interface ActionsView {
  /** True when actions are on but this browser has not given the token yet. */
  readonly loginNeeded: boolean;
  /** The CSRF token of this session (empty until logged in). */
  readonly csrf: string;
}

/** Everything a page needs to render one request. */
export interface PageContext {
  readonly taskrow: Taskrow;
  /** The request URL with the base path removed from its pathname. */
  readonly url: URL;
  /** Decoded path segments captured by the route. */
  readonly params: readonly string[];
  /** A path under the dashboard's base path with query parameters (undefined ones dropped). */
  link(path: string, query?: Record<string, string | number | undefined>): string;
  /** Undefined when actions are off. */
  readonly actions: ActionsView | undefined;
}

/** A rendered page: its title and the content that the refresh script replaces. */
export interface Page {
  readonly title: string;
  readonly body: Html;
  /** Milliseconds between refreshes of this page; 0 never. Default the dashboard's `refreshInterval`. */
  readonly refresh?: number;
}

/** Builds `link()` for a base path. */
export function linker(basePath: string): PageContext['link'] {
  return (path, query) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') q.set(k, String(v));
    const s = q.toString();
    return `${basePath}${path}${s ? `?${s}` : ''}`;
  };
}

/** A path segment for a link (names are validated, but keys and job names may hold anything). */
export const seg = (s: string | number): string => encodeURIComponent(String(s));
