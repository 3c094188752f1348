// A crawler on Loop (doloop's task loop): URLs are ids, workers `get()` the most overdue ones,
// crawl them (simulated, no network), add the links they find, bump news pages to the front and
// report with `did()`. A page is due again an hour after it was crawled.
import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';
import { database, flags, numberFlag, run } from 'taskrow-examples-common';
import { crawl } from './crawler.js';
import { seeds } from './web.js';

const USAGE = `usage: node dist/main.js [--pages N] [--workers N] [--batch N] [--delay-ms N] [--fail SHARE] [--loop NAME]

  --pages N        pages of the simulated web (default 300)
  --workers N      crawler workers running at once (default 4)
  --batch N        URLs a worker takes per get() (default 10)
  --delay-ms N     simulated fetch time per page (default 2)
  --fail SHARE     share of first fetches that fail and are bumped for a retry, 0 to 1 (default 0.05)
  --loop NAME      the loop (default crawl; table <prefix>loop_<name>)

  TASKROW_URL      mysql://user:password@host:3306/database (required)
  TASKROW_PREFIX   table prefix (default taskrow_)

A second run crawls only what is due: the bumped home pages and the news pages they link to.`;

async function main(): Promise<number> {
  const { values } = flags({
    pages: { type: 'string' },
    workers: { type: 'string' },
    batch: { type: 'string' },
    'delay-ms': { type: 'string' },
    fail: { type: 'string' },
    loop: { type: 'string' },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const o = {
    pages: numberFlag(values.pages, 'pages', 300, 3, 10_000_000),
    workers: numberFlag(values.workers, 'workers', 4, 1, 1000),
    batch: numberFlag(values.batch, 'batch', 10, 1, 1000),
    delayMs: numberFlag(values['delay-ms'], 'delay-ms', 2, 0, 60_000),
    fail: numberFlag(values.fail, 'fail', 0.05, 0, 1, true),
  };
  const name = values.loop ?? 'crawl';
  const db = database();
  const pool = mysql.createPool({ uri: db.url, connectionLimit: o.workers + 2 });
  try {
    const tr = await taskrow(pool, db.options);
    await tr.migrate();
    const loop = await tr.createLoop(name, { idType: { string: 512 } }); // idempotent
    console.log(`loop-crawler: loop "${name}" (table ${loop.table}), ${o.pages} pages, ${o.workers} workers`);

    // The home pages change often: add them (a no-op when known) and bump them to the front.
    const newSeeds = await loop.add(seeds());
    await loop.bump(seeds());
    console.log(`seeds: ${seeds().length} home pages bumped (${newSeeds} new)`);

    const started = performance.now();
    const c = await crawl(loop, o);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `crawled ${c.crawled.size} pages in ${seconds.toFixed(2)} s: ${c.fetches} fetches, ${c.failed} failed and were bumped for a retry, ` +
        `${c.recrawled} bumped pages crawled again; ${c.added} new links added, ${c.bumped} news pages bumped`,
    );
    if (c.crawled.size === seeds().length) console.log('only the bumped pages were due: every other page was crawled less than an hour ago');

    const s = await loop.stats();
    console.log(`stats: locked ${s.locked}, bumped ${s.bumped}, ids ${s.minId} .. ${s.maxId}`);
    console.log(`stats: last updates between ${(s.minUpdateTime / 1000).toFixed(0)} s and ${(s.maxUpdateTime / 1000).toFixed(0)} s ago`);
    for (const [url, check] of await loop.check(seeds())) {
      console.log(
        `check: ${url} updated ${check.sinceUpdated === null ? 'never' : check.sinceUpdated / 1000} s ago, ${check.lockedFor === null ? 'unlocked' : `locked for ${check.lockedFor / 1000} s`}`,
      );
    }
    await tr.close();
    return 0;
  } finally {
    await pool.end();
  }
}

run('loop-crawler', USAGE, main);
