import { Queue, Worker } from 'bullmq';
import mysql from 'mysql2/promise';
import { describe, it } from 'vitest';
import { taskrow } from '@taskrow/mysql2';
import { label, targets } from '../src/targets.js';
import { describeServer, machineLine } from './lib.js';
import { startRedis } from './queue-bullmq.js';
import { measurePickup, now, percentiles, pickupChild } from './pickup-child.js';

// Pickup latency: enqueue to handler start, jobs arriving at RATE per second into an idle queue,
// in the producer's process and in another process; taskrow beside BullMQ on a local Redis, same
// run. Cross-process taskrow workers poll every PICKUP_POLL milliseconds (default 50: at most one
// statement each time, 20 per second while idle), or sleep on the doorbell (`doorbell: true`,
// pollInterval 1 s). Scale: TASKROW_BENCH_PICKUP_JOBS (default 300),
// TASKROW_BENCH_PICKUP_RATE (default 100), TASKROW_BENCH_TARGETS.
const JOBS = Number(process.env['TASKROW_BENCH_PICKUP_JOBS'] ?? 300);
const RATE = Number(process.env['TASKROW_BENCH_PICKUP_RATE'] ?? 100);
const POLL = process.env['PICKUP_POLL'] ?? '50';
const ONLY = process.env['TASKROW_BENCH_TARGETS']?.split(',').map((s) => s.trim());

/** Enqueues JOBS jobs at RATE per second through `add`, and waits until `starts` has them all; returns latencies. */
async function measure(add: (i: number) => Promise<unknown>, starts: Map<number, number>): Promise<number[]> {
  return (await measurePickup(add, starts, { jobs: JOBS, rate: RATE })).latencies;
}

for (const target of targets().filter((t) => !ONLY || ONLY.includes(label(t)))) {
  describe(`pickup bench · ${label(target)}`, () => {
    it(`${JOBS} jobs at ${RATE}/s into an idle queue: enqueue to handler start, in-process and cross-process, taskrow and BullMQ`, async () => {
      const server = await describeServer(target);
      const pool = mysql.createPool({ uri: target.url, connectionLimit: 4 });
      const prefix = `pbench${process.pid}_`;
      const tr = await taskrow(pool, { prefix });
      await tr.migrate();
      const redis = await startRedis();
      const lines: string[] = [];
      try {
        // taskrow, worker in this process (default pollInterval 1 s: the enqueue wakes it).
        const inStarts = new Map<number, number>();
        const q = tr.queue<{ i: number }>('in');
        const w = q.work(async (job) => void inStarts.set(job.payload.i, now()), { concurrency: 4 });
        lines.push(`taskrow, same process: ${percentiles(await measure((i) => q.enqueue({ i }), inStarts))}`);
        await w.stop();
        // taskrow, worker in another process.
        const tc = await pickupChild({ PICKUP_KIND: 'taskrow', PICKUP_URL: target.url, PICKUP_PREFIX: prefix, PICKUP_QUEUE: 'cross', PICKUP_POLL: POLL });
        const cross = tr.queue<{ i: number }>('cross');
        lines.push(`taskrow, other process (pollInterval ${POLL} ms): ${percentiles(await measure((i) => cross.enqueue({ i }), tc.starts))}`);
        await tc.stop();
        // taskrow, worker in another process sleeping on the doorbell (default pollInterval 1 s).
        const dc = await pickupChild({
          PICKUP_KIND: 'taskrow',
          PICKUP_URL: target.url,
          PICKUP_PREFIX: prefix,
          PICKUP_QUEUE: 'bell',
          PICKUP_POLL: '1000',
          PICKUP_DOORBELL: '1',
        });
        const bell = tr.queue<{ i: number }>('bell');
        lines.push(`taskrow, other process (doorbell: true, pollInterval 1 s): ${percentiles(await measure((i) => bell.enqueue({ i }), dc.starts))}`);
        await dc.stop();
        if (redis) {
          const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
          const bq = new Queue(`pin${process.pid}`, { connection });
          const bStarts = new Map<number, number>();
          const bw = new Worker(bq.name, async (job) => void bStarts.set((job.data as { i: number }).i, now()), { connection, concurrency: 4 });
          await bw.waitUntilReady();
          lines.push(
            `BullMQ on redis-server ${redis.version}, same process: ${percentiles(await measure((i) => bq.add('j', { i }, { removeOnComplete: true }), bStarts))}`,
          );
          await bw.close();
          const bx = new Queue(`px${process.pid}`, { connection });
          const bc = await pickupChild({ PICKUP_KIND: 'bullmq', PICKUP_REDIS_PORT: String(redis.port), PICKUP_QUEUE: bx.name });
          lines.push(
            `BullMQ on redis-server ${redis.version}, other process: ${percentiles(await measure((i) => bx.add('j', { i }, { removeOnComplete: true }), bc.starts))}`,
          );
          await bc.stop();
          for (const b of [bq, bx]) {
            await b.obliterate({ force: true }).catch(() => undefined);
            await b.close();
          }
        } else lines.push('BullMQ: redis-server not installed, not run');
        process.stdout.write(
          `\n## Pickup latency (${JOBS} jobs at ${RATE}/s into an idle queue)\nserver: ${server.label}\nsettings: ${server.durability}\nmachine: ${machineLine()}\n${lines.map((l) => `- ${l}`).join('\n')}\n`,
        );
      } finally {
        await redis?.stop();
        const [tables] = await pool.query<mysql.RowDataPacket[]>(
          'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
          [`${prefix}%`],
        );
        for (const { t } of tables) await pool.query(`DROP TABLE IF EXISTS \`${String(t)}\``);
        await pool.end();
      }
    }, 300_000);
  });
}
