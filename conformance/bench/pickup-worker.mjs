// The worker process of pickup.bench.ts: taskrow (`queue.work`) or BullMQ (`Worker`), reporting the
// wall-clock time (ms, sub-millisecond) each handler started at, by job payload `i`, over IPC.
import { performance } from 'node:perf_hooks';

const {
  PICKUP_KIND: kind,
  PICKUP_URL: url,
  PICKUP_PREFIX: prefix,
  PICKUP_QUEUE: queue,
  PICKUP_REDIS_PORT: redisPort,
  PICKUP_POLL: poll,
  PICKUP_DOORBELL: doorbell,
} = process.env;
const now = () => performance.timeOrigin + performance.now();
const started = (i) => process.send?.({ i, at: now() });

if (kind === 'taskrow') {
  const mysql = (await import('mysql2/promise')).default;
  const { taskrow } = await import('@taskrow/mysql2');
  const pool = mysql.createPool({ uri: url, connectionLimit: 4 });
  const tr = await taskrow(pool, { prefix });
  const w = tr.queue(queue).work(async (job) => started(job.payload.i), { concurrency: 4, pollInterval: Number(poll), doorbell: doorbell === '1' });
  process.on('message', async () => {
    await w.stop();
    await pool.end();
    process.exit(0);
  });
} else {
  const { Worker } = await import('bullmq');
  const w = new Worker(queue, async (job) => started(job.data.i), {
    connection: { host: '127.0.0.1', port: Number(redisPort), maxRetriesPerRequest: null },
    concurrency: 4,
  });
  await w.waitUntilReady();
  process.on('message', async () => {
    await w.close();
    process.exit(0);
  });
}
process.send?.('ready');
