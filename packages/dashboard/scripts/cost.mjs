// Statements and index reads per dashboard page view on a queue of 1,000,000 jobs.
// Usage (after `pnpm build`): node packages/dashboard/scripts/cost.mjs mysql://user:pass@127.0.0.1:PORT/db
// Use a server nobody else is using: it reads the server's global status counters before and after
// each page view (Com_select, Handler_read_*), minus the cost of reading them.
import { createServer } from 'node:http';
import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';
import { dashboardHandler } from '@taskrow/dashboard';

const url = process.argv[2];
if (!url) throw new Error('usage: node cost.mjs DATABASE_URL');
const JOBS = Number(process.env.JOBS ?? 1_000_000);
const prefix = 'dcost_';
const pool = mysql.createPool({ uri: url, connectionLimit: 4 });
const probe = await mysql.createConnection(url);
const tr = await taskrow(pool, { prefix });
await tr.migrate();
const big = tr.queue('big');
const [[have]] = await probe.query(`SELECT COUNT(*) AS n FROM ${prefix}queue_jobs WHERE queue = 'big'`);
for (let i = Number(have.n); i < JOBS; i += 1000) {
  await big.enqueueMany(
    Array.from({ length: Math.min(1000, JOBS - i) }, (_, k) => ({ payload: { n: i + k }, priority: k % 3, delay: k % 100 === 0 ? 3600 : undefined })),
  );
  if (i % 100_000 === 0) process.stderr.write(`enqueued ${i}\n`);
}
const dead = await tr.queue('small').enqueueMany([{ payload: 1, maxAttempts: 1 }]);
for (const j of await tr.queue('small').claim({ limit: 1, lease: 60 })) await tr.queue('small').fail(j, 'x');
await tr.dones('seen').mark(['a', 'b']);
await tr.createLoop('pages');
await tr.loop('pages').add([1, 2, 3]);

const server = createServer(dashboardHandler({ taskrow: tr }));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;
const NAMES = ['Com_select', 'Handler_read_first', 'Handler_read_key', 'Handler_read_next', 'Handler_read_prev', 'Handler_read_rnd', 'Handler_read_rnd_next'];
const status = async () => {
  const [rows] = await probe.query(`SHOW GLOBAL STATUS WHERE Variable_name IN (${NAMES.map(() => '?').join(',')})`, NAMES);
  return Object.fromEntries(rows.map((r) => [r.Variable_name, Number(r.Value)]));
};
const delta = async (fn) => {
  const a = await status();
  const started = performance.now();
  await fn();
  const ms = performance.now() - started;
  const b = await status();
  return { ...Object.fromEntries(NAMES.map((n) => [n, b[n] - a[n]])), ms: Math.round(ms) };
};
const baseline = await delta(async () => undefined);
const [[anyJob]] = await probe.query(`SELECT id FROM ${prefix}queue_jobs WHERE queue = 'big' ORDER BY id LIMIT 1`);
const pages = ['/', '/queues/big', '/queues/big?state=delayed', `/queues/big/jobs/${anyJob.id}`, '/loops/pages', '/dones/seen', '/resources', '/metrics'];
const [[version]] = await probe.query('SELECT VERSION() AS v');
console.log(`server ${version.v}; queue "big" holds ${JOBS} jobs; pages count up to 10,000 per state (countLimit default), /metrics up to 1,000,000`);
console.log(`| page | statements (Com_select) | Handler_read_key | Handler_read_next | Handler_read_first | Handler_read_rnd_next | ms |`);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const p of pages) {
  await fetch(base + p); // warm
  const d = await delta(async () => {
    const res = await fetch(base + p);
    if (res.status !== 200) throw new Error(`${p}: ${res.status}`);
    await res.text();
  });
  const c = (n) => d[n] - baseline[n];
  console.log(
    `| \`${p}\` | ${c('Com_select')} | ${c('Handler_read_key')} | ${c('Handler_read_next')} | ${c('Handler_read_first')} | ${c('Handler_read_rnd_next')} | ${d.ms} |`,
  );
}
server.close();
await pool.end();
await probe.end();
void dead;
