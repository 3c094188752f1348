import type { Loop } from '@taskrow/core';
import { fetchLinks, isNews } from './web.js';

/** Settings of one crawl. */
export interface CrawlOptions {
  readonly workers: number;
  /** URLs a worker takes per `get()`. */
  readonly batch: number;
  readonly pages: number;
  readonly delayMs: number;
  /** Share of first fetches that fail (the URL is bumped for another try at once). */
  readonly fail: number;
}

/** What the crawl did, counted by the workers. */
export interface CrawlCounts {
  fetches: number;
  crawled: Set<string>;
  /** URLs fetched more than once in this run (bumped after their first crawl). */
  recrawled: number;
  failed: number;
  added: number;
  bumped: number;
}

/** Milliseconds a URL stays locked for the worker that got it (a minute); if that worker dies, the URL is due again after this. */
const LOCK_FOR = 60_000;
/** A crawled page is due again after an hour. */
const MIN_LOOP_TIME = 3_600_000;

/**
 * Runs `workers` workers over the loop until none of them finds a due URL while no other is
 * busy. Each worker: `get()` a batch (locked for it alone), fetch, `add()` the links it found,
 * `bump()` news pages to the front (once each per run), `did()` the fetched URLs and `bump()` the
 * failed ones, which unlocks them at the top priority, so that a worker tries them again at once.
 * (`unlock()` would put a page crawled before back on its hourly schedule instead.)
 */
export async function crawl(loop: Loop<string>, o: CrawlOptions): Promise<CrawlCounts> {
  const counts: CrawlCounts = { fetches: 0, crawled: new Set(), recrawled: 0, failed: 0, added: 0, bumped: 0 };
  const failedOnce = new Set<string>();
  const bumpedOnce = new Set<string>();
  let busy = 0; // workers inside get() or crawling a batch

  async function worker(): Promise<void> {
    for (;;) {
      busy += 1;
      const urls = await loop.get(o.batch, { lockFor: LOCK_FOR, minLoopTime: MIN_LOOP_TIME });
      if (urls.length === 0) {
        busy -= 1;
        if (busy === 0) return; // nobody else can add or free a URL any more
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const fetched: string[] = [];
      const failed: string[] = [];
      const links = new Set<string>();
      for (const url of urls) {
        counts.fetches += 1;
        if (!failedOnce.has(url) && Math.random() < o.fail) {
          failedOnce.add(url);
          failed.push(url);
          continue;
        }
        for (const link of await fetchLinks(url, o.pages, o.delayMs)) links.add(link);
        if (counts.crawled.has(url)) counts.recrawled += 1;
        counts.crawled.add(url);
        fetched.push(url);
      }
      // (`counts.x += await ...` would read counts.x before the await and lose other workers' counts)
      const added = await loop.add(links);
      counts.added += added;
      const news = [...links].filter((url) => isNews(url) && !bumpedOnce.has(url));
      for (const url of news) bumpedOnce.add(url);
      const bumped = news.length > 0 ? await loop.bump(news) : 0;
      counts.bumped += bumped;
      await loop.did(fetched);
      // bump() counts the ids whose lock it lowered: a failed page that another worker's news bump
      // (above) already gave top priority counts 0 there, yet it failed here all the same.
      if (failed.length > 0) await loop.bump(failed);
      counts.failed += failed.length;
      busy -= 1;
    }
  }

  await Promise.all(Array.from({ length: o.workers }, () => worker()));
  return counts;
}
