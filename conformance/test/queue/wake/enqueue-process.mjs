// Another process's producer for fast-pickup.test.ts: enqueues ENQ_COUNT jobs (payload i) into
// ENQ_QUEUE, ENQ_GAP_MS apart, through a pool of ENQ_POOL connections (default 2), each with a dedup
// key of its own when ENQ_KEYED is set (so it runs its transaction in the client), and reports over
// IPC the wall-clock time (ms) each enqueue returned and how long it took. With ENQ_GATE set it
// says 'ready' once connected and enqueues only when a message comes back.
import { performance } from 'node:perf_hooks';
import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';

const { ENQ_URL: url, ENQ_PREFIX: prefix, ENQ_QUEUE: queue, ENQ_COUNT: count, ENQ_GAP_MS: gap, ENQ_POOL: size, ENQ_KEYED: keyed } = process.env;
const pool = mysql.createPool({ uri: url, connectionLimit: Number(size ?? 2) });
const tr = await taskrow(pool, { prefix });
const q = tr.queue(queue);
if (process.env.ENQ_GATE) {
  // Connected and ready: the first enqueue waits for the test's word, so process start-up is not in its timing.
  process.send?.('ready');
  await new Promise((r) => process.once('message', r));
}
for (let i = 0; i < Number(count); i++) {
  const t0 = performance.now();
  await q.enqueue(i, keyed ? { dedupKey: `k${i}` } : undefined);
  const t1 = performance.now();
  process.send?.({ i, at: performance.timeOrigin + t1, took: t1 - t0 });
  await new Promise((r) => setTimeout(r, Number(gap)));
}
// Rings run in the background after each enqueue: close() waits for the last one before the pool ends.
await tr.close();
await pool.end();
process.send?.('done');
