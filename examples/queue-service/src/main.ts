// A producer/worker service on Queue: a producer enqueues jobs (batches, urgent, delayed, deduplicated),
// a worker runs them with retries and backoff, and on SIGINT / SIGTERM (or, in demo mode, once the
// queue is drained, after --stop-after jobs or --timeout seconds) the worker stops gracefully.
import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';
import { database, flags, numberFlag, run } from 'taskrow-examples-common';
import { handler, type Payload, type Tally } from './jobs.js';
import { produce } from './producer.js';

const USAGE = `usage: node dist/main.js [--jobs N] [--concurrency N] [--work-ms N] [--serve] [--stop-after N] [--timeout S] [--grace S] [--queue NAME]

  --jobs N          thumbnail jobs to enqueue (default 200), plus 9 special enqueues
  --concurrency N   handlers running at once (default 4)
  --work-ms N       simulated work per thumbnail (default 5)
  --serve           keep running until SIGINT or SIGTERM (default: stop once the queue is drained)
  --stop-after N    stop once the handler has run N times
  --timeout S       stop after S seconds at the latest (default 60; none with --serve)
  --grace S         stop(): seconds to let running handlers finish before releasing them (default 10)
  --queue NAME      the queue (default images)

  TASKROW_URL       mysql://user:password@host:3306/database (required)
  TASKROW_PREFIX    table prefix (default taskrow_)`;

function options() {
  const { values } = flags({
    jobs: { type: 'string' },
    concurrency: { type: 'string' },
    'work-ms': { type: 'string' },
    serve: { type: 'boolean' },
    'stop-after': { type: 'string' },
    timeout: { type: 'string' },
    grace: { type: 'string' },
    queue: { type: 'string' },
  });
  const serve = values.serve === true;
  return {
    help: values.help === true,
    serve,
    jobs: numberFlag(values.jobs, 'jobs', 200, 1, 10_000_000),
    concurrency: numberFlag(values.concurrency, 'concurrency', 4, 1, 1000),
    workMs: numberFlag(values['work-ms'], 'work-ms', 5, 0, 3_600_000),
    stopAfter: numberFlag(values['stop-after'], 'stop-after', Infinity, 1, Number.MAX_SAFE_INTEGER),
    timeout: numberFlag(values.timeout, 'timeout', serve ? Infinity : 60, 0.001, 1e9, true),
    grace: numberFlag(values.grace, 'grace', 10, 0, 86_400, true),
    queue: values.queue ?? 'images',
  };
}

async function main(): Promise<number> {
  const o = options();
  if (o.help) {
    console.log(USAGE);
    return 0;
  }
  const db = database();
  const pool = mysql.createPool({ uri: db.url, connectionLimit: 8 });
  try {
    const tr = await taskrow(pool, db.options);
    await tr.migrate();
    // Finished jobs are kept an hour so the stats show them; retries wait 0.2 s, 0.4 s, ... (at most 2 s).
    const queue = tr.queue<Payload>(o.queue, { backoff: { base: 200, max: 2000 }, keepFinishedFor: 3_600_000 });
    const log = (line: string): void => console.log(`  ${line}`);
    console.log(`queue-service: queue "${o.queue}" (table prefix ${tr.prefix}), ${o.jobs} thumbnail jobs, concurrency ${o.concurrency}`);

    // Everything that ends the service resolves `stopped` with a reason; the first one wins.
    let reason: string | undefined;
    let wake: (r: string) => void = () => undefined;
    const stopped = new Promise<string>((resolve) => (wake = resolve));
    const stop = (r: string): void => {
      reason ??= r;
      wake(reason);
    };
    const onSignal = (signal: NodeJS.Signals): void => {
      if (reason !== undefined) process.exit(130); // a second signal: give up waiting
      stop(`received ${signal}`);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    const timer = Number.isFinite(o.timeout) ? setTimeout(() => stop(`timeout after ${o.timeout} s`), o.timeout * 1000) : undefined;

    const tally: Tally = { succeeded: 0, threw: 0, thumbnailsStarted: 0, dead: [] };
    const handle = handler(o.workMs, log, tally);
    const worker = queue.work(
      async (job, context) => {
        try {
          await handle(job, context);
        } finally {
          if (tally.succeeded + tally.threw >= o.stopAfter) stop(`the handler ran ${o.stopAfter} times`);
        }
      },
      { concurrency: o.concurrency, pollInterval: 200, onError: (err) => console.error('queue-service: worker error:', err) },
    );
    console.log('worker started');

    let failure: unknown;
    const failed = (err: unknown): undefined => {
      failure ??= err;
      stop('an error');
      return undefined;
    };
    const producing = produce(queue, o.jobs, () => reason !== undefined).catch(failed);
    const progress = setInterval(() => {
      const c = worker.counts;
      console.log(`progress: completed ${c.completed}, failed attempts ${c.failed}`);
    }, 500);

    // Demo mode: stop once nothing is ready, delayed or running any more.
    const drained = (async () => {
      await producing;
      while (!o.serve && reason === undefined) {
        const s = await queue.stats();
        if (s.counts.ready + s.counts.delayed + s.counts.running === 0) return stop('the queue is drained');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })().catch(failed);

    console.log(`stopping: ${await stopped}`);
    const produced = await producing;
    const result = await worker.stop({ timeout: o.grace * 1000 });
    await drained;
    clearInterval(progress);
    clearTimeout(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);

    if (failure !== undefined) throw failure;
    const c = worker.counts;
    const s = await queue.stats();
    console.log(`enqueued: ${produced?.added} jobs (${produced?.deduplicated} enqueues deduplicated)`);
    console.log(`worker: completed ${c.completed}, failed attempts ${c.failed}, lost leases ${c.lost}, released at stop ${result.released}`);
    for (const line of tally.dead) console.log(`dead: ${line}`);
    const counts = Object.entries(s.counts)
      .map(([state, n]) => `${state} ${n}`)
      .join(', ');
    console.log(`queue "${s.queue}": ${counts}`);
    await tr.close();
    return 0;
  } finally {
    await pool.end();
  }
}

run('queue-service', USAGE, main);
