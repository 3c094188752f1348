// Another process's producer for fast-pickup.test.ts: enqueues ENQ_COUNT jobs (payload i) into
// ENQ_QUEUE, ENQ_GAP_MS apart, and reports over IPC the wall-clock time (ms) each enqueue returned.
import { performance } from 'node:perf_hooks';
import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';

const { ENQ_URL: url, ENQ_PREFIX: prefix, ENQ_QUEUE: queue, ENQ_COUNT: count, ENQ_GAP_MS: gap } = process.env;
const pool = mysql.createPool({ uri: url, connectionLimit: 2 });
const tr = await taskrow(pool, { prefix });
const q = tr.queue(queue);
for (let i = 0; i < Number(count); i++) {
  await q.enqueue(i);
  process.send?.({ i, at: performance.timeOrigin + performance.now() });
  await new Promise((r) => setTimeout(r, Number(gap)));
}
// Rings run unawaited after each enqueue: let the last one go out before the pool ends.
await new Promise((r) => setTimeout(r, 200));
await pool.end();
process.send?.('done');
