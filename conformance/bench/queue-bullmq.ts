import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { shareOf } from './lib.js';

// The queue people pick instead: BullMQ on a local Redis (Debian's redis-server), started on a
// free loopback port for the benchmark and stopped afterwards by its own pid.

const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p));
/** BullMQ's Redis persists as the servers do: see `startRedis`. */
export const DURABLE = process.env['TASKROW_BENCH_DURABILITY'] === 'full';

/** A running redis-server this process started. */
export interface LocalRedis {
  readonly port: number;
  readonly version: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port }, () => {
      s.end();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Starts redis-server on a free loopback port, without persistence, or with the append-only file
 * synced every second (`appendfsync everysec`, Redis's durable default) when the benchmark runs
 * durable servers (`TASKROW_BENCH_DURABILITY=full`); undefined when it is not installed.
 */
export async function startRedis(): Promise<LocalRedis | undefined> {
  if (!REDIS) return undefined;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'taskrow-redis-'));
  const child: ChildProcess = spawn(
    REDIS,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      ...(DURABLE ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no']),
      '--dir',
      dir,
    ],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  for (let i = 0; i < 200 && !(await answers(port)); i++) await new Promise((r) => setTimeout(r, 25));
  const version = await new Promise<string>((resolve) => {
    const v = spawn(REDIS, ['--version']);
    let out = '';
    v.stdout.on('data', (d: Buffer) => (out += d.toString()));
    v.on('close', () => resolve(/v=(\S+)/.exec(out)?.[1] ?? 'unknown'));
  });
  return {
    port,
    version,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `workers` trivial BullMQ Workers of queue `name` (not yet running) and a promise that resolves once they completed `n` jobs in all. */
function countingWorkers(name: string, connection: object, workers: number, concurrency: number, n: number): { ws: Worker[]; all: Promise<void> } {
  let done = 0;
  let finish!: () => void;
  const all = new Promise<void>((r) => (finish = r));
  const ws = Array.from({ length: workers }, () => {
    const w = new Worker(name, async () => undefined, { connection, concurrency, autorun: false });
    w.on('completed', () => {
      done += 1;
      if (done === n) finish();
    });
    return w;
  });
  return { ws, all };
}

/**
 * BullMQ draining `n` queued trivial jobs with `workers` Workers of `concurrency` each; resolves to
 * seconds from the workers' start until every job completed. Filling the queue is not timed.
 */
export async function bullmqDrain(port: number, n: number, workers: number, concurrency: number, payload: () => object): Promise<number> {
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const name = `bench${process.pid}${Date.now()}`;
  const queue = new Queue(name, { connection });
  try {
    for (let i = 0; i < n; i += 1000) {
      const jobs = Array.from({ length: Math.min(1000, n - i) }, () => ({
        name: 'job',
        data: payload(),
        opts: { removeOnComplete: true, removeOnFail: true },
      }));
      await queue.addBulk(jobs);
    }
    const { ws, all } = countingWorkers(name, connection, workers, concurrency, n);
    const t0 = performance.now();
    for (const w of ws) void w.run();
    await all;
    const seconds = (performance.now() - t0) / 1000;
    await Promise.all(ws.map((w) => w.close()));
    return seconds;
  } finally {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
}

/**
 * BullMQ in Köhntopp's scenario: `producers` producers (each its own Queue connection) add `n`
 * jobs in all, `perCall` per `addBulk`, while `workers` Workers of `concurrency` each run them;
 * resolves to seconds from the start until every job completed.
 */
export async function bullmqMixed(
  port: number,
  n: number,
  shape: { workers: number; concurrency: number; producers: number; perCall: number },
  payload: () => object,
): Promise<number> {
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const name = `mixed${process.pid}${Date.now()}`;
  const queues = Array.from({ length: shape.producers }, () => new Queue(name, { connection }));
  try {
    const { ws, all } = countingWorkers(name, connection, shape.workers, shape.concurrency, n);
    const t0 = performance.now();
    for (const w of ws) void w.run();
    await Promise.all(
      queues.map(async (q, p) => {
        const mine = shareOf(n, shape.producers, p);
        for (let i = 0; i < mine; i += shape.perCall) {
          const jobs = Array.from({ length: Math.min(shape.perCall, mine - i) }, () => ({
            name: 'job',
            data: payload(),
            opts: { removeOnComplete: true, removeOnFail: true },
          }));
          await q.addBulk(jobs);
        }
      }),
    );
    await all;
    const seconds = (performance.now() - t0) / 1000;
    await Promise.all(ws.map((w) => w.close()));
    return seconds;
  } finally {
    await queues[0]!.obliterate({ force: true }).catch(() => undefined);
    await Promise.all(queues.map((q) => q.close()));
  }
}
