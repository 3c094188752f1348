// A small simulated web, so the example crawls without touching the network: pages 0..size-1 spread
// over three hosts, each page linking to the next one (so every page is reachable from page 0) and to
// two others picked by arithmetic. Every 25th page is a news page that changes often.

const HOSTS = ['example.org', 'example.com', 'example.net'];

/** The URL of page `i`. */
export function pageUrl(i: number): string {
  return `https://${HOSTS[i % HOSTS.length]}/page/${i}`;
}

function pageNumber(url: string): number {
  const n = Number(/\/page\/(\d+)$/.exec(url)?.[1]);
  if (!Number.isInteger(n)) throw new Error(`not a page of the simulated web: ${url}`);
  return n;
}

/** The home pages of the three hosts: the crawl's seeds. */
export function seeds(): string[] {
  return HOSTS.map((_, i) => pageUrl(i));
}

/** True for the pages that change often. */
export function isNews(url: string): boolean {
  return pageNumber(url) % 25 === 0;
}

/** "Fetches" a page after `delayMs` and returns the links on it. */
export async function fetchLinks(url: string, size: number, delayMs: number): Promise<string[]> {
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  const i = pageNumber(url);
  return [(i + 1) % size, (i * 7 + 3) % size, (i * 13 + 5) % size].map(pageUrl);
}
