import { createServer } from 'node:http';
import mysql from 'mysql2/promise';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import { metricsHandler, registerTaskrowMetrics, workerMetrics } from '../src/index.js';
import { openDb, serve, target, type Db } from './harness.js';
import { deadJobs, manyJobs } from './seed.js';

const t = target();

/** Parses the Prometheus text format into `name{labels}` -> value. */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

describe(`dashboard metrics on ${t.engine} ${t.version}`, () => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb('m');
    await manyJobs(db.tr, 'depth', 1234);
    await deadJobs(db.tr, 'depth', 5);
    await db.tr.queue('later').enqueueMany([
      { payload: 1, delay: 3_600_000 },
      { payload: 2, delay: 3_600_000 },
    ]);
    await db.tr.createLoop('crawl');
    await db.tr.loop('crawl').add([1, 2, 3, 4, 5]);
    await db.tr.loop('crawl').get(3);
    await db.tr.loop('crawl').bump([5]);
    await db.tr.dones('seen').mark(['a', 'b', 'c', 'd']);
    await db.tr.resources({ releaseOnExit: false }).acquire('busy', { inputs: [], outputs: ['m.out'], lease: 600_000 });
  });
  afterAll(async () => db?.close());

  it('serves queue depth, dead jobs, loop, Dones and Resources gauges on /metrics that match the probe', async () => {
    const web = await serve({ taskrow: db.tr });
    try {
      const res = await fetch(web.url('/metrics'));
      expect(res.headers.get('content-type')).toContain('text/plain');
      const m = parse(await res.text());
      const byState = await db.rows(`SELECT \`queue\` AS q, \`phase\` AS p, COUNT(*) AS n FROM \`${db.prefix}queue_jobs\` GROUP BY \`queue\`, \`phase\``);
      const states = ['ready', 'delayed', 'running', 'done', 'dead', 'blocked'];
      expect(byState.length).toBeGreaterThanOrEqual(3);
      for (const r of byState) expect(m.get(`taskrow_queue_jobs{queue="${String(r['q'])}",state="${states[Number(r['p'])]!}"}`)).toBe(Number(r['n']));
      expect(m.get('taskrow_queue_jobs{queue="depth",state="ready"}')).toBe(1234);
      expect(m.get('taskrow_queue_dead_jobs{queue="depth"}')).toBe(5);
      expect(m.get('taskrow_queue_oldest_runnable_age_seconds{queue="depth"}')).toBeGreaterThan(0);
      expect(m.get('taskrow_queue_oldest_runnable_age_seconds{queue="later"}')).toBe(0);
      const loop = await db.rows(
        `SELECT SUM(\`lock_until\` > UNIX_TIMESTAMP()) AS locked, SUM(\`lock_until\` <= UNIX_TIMESTAMP()) AS bumped FROM \`${db.prefix}loop_crawl\``,
      );
      expect(m.get('taskrow_loop_locked_ids{loop="crawl"}')).toBe(Number(loop[0]!['locked']));
      expect(m.get('taskrow_loop_bumped_ids{loop="crawl"}')).toBe(Number(loop[0]!['bumped'] ?? 0));
      expect(m.get('taskrow_dones_keys{namespace="seen"}')).toBe(4);
      const running = await db.rows(`SELECT COUNT(*) AS n FROM \`${db.prefix}resource_jobs\` WHERE \`lease_until\` > UTC_TIMESTAMP(6)`);
      expect(m.get('taskrow_resources_running_jobs')).toBe(Number(running[0]!['n']));
    } finally {
      await web.close();
    }
  });

  it('caps counts at countLimit, and metricsHandler answers 503 while the database cannot be read', async () => {
    const capped = parse(await registerTaskrowMetrics({ taskrow: db.tr, countLimit: 1000 }).metrics());
    expect(capped.get('taskrow_queue_jobs{queue="depth",state="ready"}')).toBe(1000);
    expect(() => registerTaskrowMetrics({ taskrow: db.tr, every: 1 } as never)).toThrow(/no option "every"; accepted: taskrow, registry, countLimit/);
    const pool = mysql.createPool({ uri: t.url, connectionLimit: 2 });
    const tr = await taskrow(pool, { prefix: db.prefix });
    const server = createServer(metricsHandler({ taskrow: tr }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    try {
      expect((await fetch(url)).status).toBe(200);
      await pool.end();
      const down = await fetch(url);
      expect(down.status).toBe(503);
      expect(await down.text()).toContain('taskrow metrics unavailable');
    } finally {
      server.close();
    }
  });

  it("counts a worker's claimed, completed, failed and lost jobs and times its handler in the application's registry", async () => {
    const registry = new Registry();
    const wm = workerMetrics({ registry });
    const q = db.tr.queue<{ ok: boolean }>('work');
    await q.enqueueMany([...Array(6)].map((_, i) => ({ payload: { ok: i % 3 !== 0 }, maxAttempts: 1 })));
    const worker = wm.work(
      q,
      async (job) => {
        if (!job.payload.ok) throw new Error('handler failed');
      },
      { concurrency: 2, pollInterval: 50 },
    );
    await expect
      .poll(async () => (await db.rows(`SELECT COUNT(*) AS n FROM \`${db.prefix}queue_jobs\` WHERE \`queue\` = 'work' AND \`phase\` <> 4`))[0]!['n'], {
        timeout: 30_000,
      })
      .toBe(0);
    await expect.poll(() => worker.counts.completed + worker.counts.failed, { timeout: 30_000 }).toBe(6);
    await worker.stop();
    const m = parse(await registry.metrics());
    expect(m.get('taskrow_worker_jobs_claimed_total{queue="work"}')).toBe(6);
    expect(m.get('taskrow_worker_jobs_completed_total{queue="work"}')).toBe(4);
    expect(m.get('taskrow_worker_jobs_failed_total{queue="work"}')).toBe(2);
    expect(m.get('taskrow_worker_lease_lost_total{queue="work"}')).toBe(0);
    expect(m.get('taskrow_worker_handler_duration_seconds_count{queue="work",outcome="completed"}')).toBe(4);
    expect(m.get('taskrow_worker_handler_duration_seconds_count{queue="work",outcome="failed"}')).toBe(2);
    const dead = await db.rows(`SELECT COUNT(*) AS n FROM \`${db.prefix}queue_jobs\` WHERE \`queue\` = 'work' AND \`phase\` = 4`);
    expect(Number(dead[0]!['n'])).toBe(2);
  });
});
