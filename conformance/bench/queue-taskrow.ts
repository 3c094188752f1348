import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';
import { WORKER_CHANNELS, type Queue, type Taskrow } from '@taskrow/core';
import { shareOf } from './lib.js';
import { workSince, type WorkPerJob, type WorkProbe } from './work.js';

/** Enqueues `n` jobs, untimed, 1,000 per call. */
export async function fillQueue(q: Queue, n: number, payload: () => object): Promise<void> {
  for (let i = 0; i < n; i += 1000) await q.enqueueMany(Array.from({ length: Math.min(1000, n - i) }, () => ({ payload: payload() })));
}

/** A drain's outcome: `claimMs` and `ackMs` are the durations of every claim that took jobs and every completion batch (worker channels). */
export interface DrainResult {
  readonly rate: number;
  readonly capped: boolean;
  readonly done: number;
  readonly errors: unknown[];
  readonly claimMs: number[];
  readonly ackMs: number[];
  /** What the timed window cost per job, when the drain was given a probe. */
  readonly work?: WorkPerJob;
}

/** Collects the `ms` of every message on `channel` about queue `name` until the returned stop is called. */
function timings(channel: string, name: string): { ms: number[]; stop: () => void } {
  const ms: number[] = [];
  const on = (m: unknown): void => {
    const msg = m as { queue: string; ms: number };
    if (msg.queue === name) ms.push(msg.ms);
  };
  subscribe(channel, on);
  return { ms, stop: () => unsubscribe(channel, on) };
}

/**
 * `consumers` taskrow workers (concurrency and batch `perWorker`, default 100), draining queue
 * `name` until `total` jobs are acked or `capSeconds` pass. With `produce`, that many producers
 * enqueue the `total` jobs meanwhile, `perCommit` per call. Workers and producers share one taskrow
 * instance per server, over a pool with a connection for each of them, as one application process
 * runs taskrow (each worker keeps its own pooled connection between its claims). Leftover jobs of
 * the queue are deleted afterwards. With several URLs (the nodes of a cluster), one instance per
 * node: worker or producer `i` uses node `i % url.length`. With `probe`, the result also tells what
 * the timed window cost per job (pools and handles are made before it, and closed after it).
 */
export async function taskrowDrain(
  url: string | readonly string[],
  prefix: string,
  name: string,
  consumers: number,
  total: number,
  capSeconds: number,
  produce?: ProduceShape,
  perWorker = 100,
  probe?: WorkProbe,
): Promise<DrainResult> {
  const urls = typeof url === 'string' ? [url] : url;
  const users = consumers + (produce?.producers ?? 0);
  const pools = urls.map((u) => mysql.createPool({ uri: u, connectionLimit: Math.ceil(users / urls.length) + 2 }));
  const instances = await Promise.all(pools.map((pool) => taskrow(pool, { prefix })));
  const trs = Array.from({ length: users }, (_, i) => instances[i % instances.length]!);
  const errors: unknown[] = [];
  const claims = timings(WORKER_CHANNELS.claim, name);
  const acks = timings(WORKER_CHANNELS.ack, name);
  const mark = await probe?.read();
  const t0 = performance.now();
  const deadline = t0 + capSeconds * 1000;
  const workers = trs
    .slice(0, consumers)
    .map((tr) =>
      tr
        .queue(name)
        .work(() => undefined, { concurrency: perWorker, batchSize: perWorker, lease: 30_000, pollInterval: 50, onError: (e) => void errors.push(e) }),
    );
  const producing = produce ? produceInto(trs.slice(consumers), name, total, produce, deadline, errors) : [];
  const done = (): number => workers.reduce((s, w) => s + w.counts.completed, 0);
  while (done() < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const seconds = (performance.now() - t0) / 1000;
  const n = done();
  const work = probe && mark ? await workSince(probe, mark, n) : undefined;
  await Promise.all([...workers.map((w) => w.stop({ timeout: 5000 })), ...producing]);
  claims.stop();
  acks.stop();
  await pools[0]!.query(`DELETE FROM \`${prefix}queue_jobs\` WHERE queue = ?`, [name]);
  await Promise.all(instances.map((tr) => tr.close()));
  await Promise.all(pools.map((p) => p.end()));
  return { rate: n / seconds, capped: n < total, done: n, errors, claimMs: claims.ms, ackMs: acks.ms, ...(work ? { work } : {}) };
}

/** How producers enqueue: `producers` of them (own connections), `perCommit` jobs per `enqueueMany` call. */
export interface ProduceShape {
  readonly producers: number;
  readonly perCommit: number;
  readonly payload: () => object;
}

/**
 * One producer per handle of `trs` enqueues its share of `total` jobs into queue `name`,
 * `perCommit` per call, until done or `deadline` (`performance.now()`); errors go to `errors`.
 */
function produceInto(trs: readonly Taskrow[], name: string, total: number, produce: ProduceShape, deadline: number, errors: unknown[]): Promise<void>[] {
  return trs.map(async (tr, p) => {
    const q = tr.queue(name);
    const mine = shareOf(total, trs.length, p);
    for (let i = 0; i < mine && performance.now() < deadline; i += produce.perCommit) {
      const items = Array.from({ length: Math.min(produce.perCommit, mine - i) }, () => ({ payload: produce.payload() }));
      await q.enqueueMany(items).catch((e: unknown) => void errors.push(e));
    }
  });
}

/**
 * The producers of a produce + drain run alone (no consumer): `produce.producers` connections
 * enqueue `total` jobs into queue `name`, `perCommit` per call, until done or `capSeconds` pass;
 * the jobs enqueued over the seconds taken. The queue's jobs are deleted afterwards.
 */
export async function taskrowProduce(
  url: string,
  prefix: string,
  name: string,
  total: number,
  capSeconds: number,
  produce: ProduceShape,
): Promise<DrainResult> {
  const conns = await Promise.all(Array.from({ length: produce.producers }, () => mysql.createConnection(url)));
  const trs = await Promise.all(conns.map((c) => taskrow(c, { prefix })));
  const errors: unknown[] = [];
  const t0 = performance.now();
  await Promise.all(produceInto(trs, name, total, produce, t0 + capSeconds * 1000, errors));
  const seconds = (performance.now() - t0) / 1000;
  const [rows] = await conns[0]!.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${prefix}queue_jobs\` WHERE queue = ?`, [name]);
  const n = Number(rows[0]!['n']); // the jobs that committed, counted by the table
  await conns[0]!.query(`DELETE FROM \`${prefix}queue_jobs\` WHERE queue = ?`, [name]);
  await Promise.all(conns.map((c) => c.end()));
  return { rate: n / seconds, capped: n < total, done: n, errors, claimMs: [], ackMs: [] };
}

/** One consumer's claim(batch) + complete loop over `total` queued jobs: jobs/s and the median claim() time. */
export async function taskrowClaimLoop(q: Queue, total: number, batch: number): Promise<{ rate: number; claimMs: number }> {
  const claims: number[] = [];
  let done = 0;
  const t0 = performance.now();
  while (done < total) {
    const c0 = performance.now();
    const jobs = await q.claim({ limit: batch, lease: 30_000 });
    claims.push(performance.now() - c0);
    if (jobs.length === 0) throw new Error(`the queue ran dry after ${done} of ${total} jobs`);
    await q.complete(jobs);
    done += jobs.length;
  }
  const seconds = (performance.now() - t0) / 1000;
  claims.sort((a, b) => a - b);
  return { rate: done / seconds, claimMs: claims[claims.length >> 1]! };
}

/**
 * Adds `n` finished jobs (state done, kept for a year) to queue `name` with plain SQL, doubling
 * the rows each statement; resolves to the seconds it took.
 */
export async function fillKept(pool: mysql.Pool, prefix: string, name: string, n: number): Promise<number> {
  const t = `\`${prefix}queue_jobs\``;
  const t0 = performance.now();
  const cols = '`queue`, `grp`, `phase`, `priority`, `due_at`, `run_at`, `max_attempts`, `token`, `payload`, `created_at`, `finished_at`';
  await pool.query(
    `INSERT INTO ${t} (${cols}) VALUES (?, '', 3, 0, UTC_TIMESTAMP(6) + INTERVAL 1 YEAR, UTC_TIMESTAMP(6), 5, 1, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
    [name, JSON.stringify({ d: 'x'.repeat(64), e: 'y'.repeat(64) })],
  );
  for (let have = 1; have < n; ) {
    const add = Math.min(have, n - have, 100_000);
    await pool.query(`INSERT INTO ${t} (${cols}) SELECT ${cols} FROM ${t} WHERE \`queue\` = ? AND \`phase\` = 3 LIMIT ${add}`, [name]);
    have += add;
  }
  return (performance.now() - t0) / 1000;
}

/** The server's deadlock counter: MariaDB's Innodb_deadlocks status, or MySQL's lock_deadlocks metric. */
export async function serverDeadlocks(pool: mysql.Pool): Promise<number> {
  const [status] = await pool.query<mysql.RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'");
  if (status[0]) return Number(status[0]['Value']);
  const [metric] = await pool.query<mysql.RowDataPacket[]>("SELECT `COUNT` AS n FROM information_schema.INNODB_METRICS WHERE NAME = 'lock_deadlocks'");
  return Number(metric[0]?.['n'] ?? 0);
}

/** The server's undo history list length (SHOW ENGINE INNODB STATUS, both engines). */
async function historyLength(conn: mysql.Connection): Promise<number> {
  const [rows] = await conn.query<mysql.RowDataPacket[]>('SHOW ENGINE INNODB STATUS');
  return Number(/History list length (\d+)/.exec(String(rows[0]?.['Status']))?.[1] ?? 0);
}

/**
 * Runs `work` while another connection keeps one REPEATABLE READ snapshot open (as a report query
 * or `mysqldump --single-transaction` does: InnoDB cannot purge what the snapshot may still read),
 * sampling the history list length every 100 ms; resolves to `work`'s result and the longest
 * history list seen.
 */
export async function underReadView<T>(url: string, table: string, work: () => Promise<T>): Promise<{ result: T; maxHistory: number }> {
  const view = await mysql.createConnection(url);
  const probe = await mysql.createConnection(url);
  let maxHistory = 0;
  let sampling = true;
  try {
    await view.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    await view.query('START TRANSACTION WITH CONSISTENT SNAPSHOT');
    await view.query(`SELECT COUNT(*) FROM ${table}`);
    const sampler = (async () => {
      while (sampling) {
        maxHistory = Math.max(maxHistory, await historyLength(probe));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const result = await work().finally(() => (sampling = false));
    await sampler;
    return { result, maxHistory };
  } finally {
    await view.query('ROLLBACK').catch(() => undefined);
    await Promise.all([view.end(), probe.end()]);
  }
}
