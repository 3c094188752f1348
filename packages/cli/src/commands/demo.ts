import { intFlag, parse } from '../args.js';
import { connect, type Connection } from '../connect.js';
import type { Command } from './command.js';

const rate = (n: number, seconds: number): string => `${Math.round(n / seconds).toLocaleString('en-US')}/s`;
const fmt = (n: number): string => n.toLocaleString('en-US');
const now = (): number => performance.now() / 1000;

/** A live line on stderr when it is a terminal; silent otherwise (stdout carries the results). */
function live(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r${text}\x1b[K`);
}
function endLive(): void {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
}

/** Köhntopp's scenario: producers insert while consumers claim batches with SKIP LOCKED, ack, delete. */
async function queueRound(conn: Connection, jobs: number, say: (s: string) => Promise<void>): Promise<string> {
  const queue = conn.tr.queue<{ n: number }>('demo-jobs');
  const producers = 2;
  const consumers = 10;
  await say(`queue: ${producers} producers enqueue ${fmt(jobs)} jobs in batches of 100 while ${consumers} workers claim batches of 100`);
  let done = 0;
  let twice = 0;
  const seen = new Set<number>();
  const t0 = now();
  const workers = Array.from({ length: consumers }, () =>
    queue.work(
      (job) => {
        if (seen.has(job.payload.n)) twice += 1;
        seen.add(job.payload.n);
        done += 1;
      },
      { concurrency: 100, batchSize: 100, lease: 30_000, pollInterval: 50 },
    ),
  );
  let produced = 0;
  const produce = async (p: number): Promise<void> => {
    for (let start = p * 100; start < jobs; start += producers * 100) {
      const batch = Array.from({ length: Math.min(100, jobs - start) }, (_, i) => ({ payload: { n: start + i } }));
      await queue.enqueueMany(batch);
      produced += batch.length;
    }
  };
  const ticker = setInterval(() => live(`queue: ${fmt(produced)} enqueued, ${fmt(done)} done (${rate(done, now() - t0)})`), 100);
  await Promise.all(Array.from({ length: producers }, (_, p) => produce(p)));
  while (done < jobs) await new Promise((r) => setTimeout(r, 20));
  const seconds = now() - t0;
  clearInterval(ticker);
  endLive();
  await Promise.all(workers.map((w) => w.stop({ timeout: 5000 })));
  const stats = await queue.stats();
  const left = Object.values(stats.counts).reduce((a, b) => a + b, 0);
  const exact = twice === 0 && seen.size === jobs ? 'each exactly once' : `${fmt(twice)} ran twice, ${fmt(jobs - seen.size)} never ran`;
  return `queue: ${fmt(jobs)} jobs produced and consumed concurrently in ${seconds.toFixed(1)} s (${rate(jobs, seconds)}), ${exact}; ${fmt(left)} left in the table`;
}

/** The resubmission story: mark a random 70% of the tasks done, then ask which are pending. */
async function donesRound(conn: Connection, tasks: number, say: (s: string) => Promise<void>): Promise<string> {
  const run = conn.tr.dones('demo-run');
  await run.clear({ purge: 'wait' });
  const all = Array.from({ length: tasks }, (_, i) => `task-${String(i).padStart(6, '0')}`);
  const shuffled = [...all];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  const finished = shuffled.slice(0, Math.round(tasks * 0.7));
  await say(`dones: ${fmt(tasks)} tasks; jobs mark a random ${fmt(finished.length)} of them done, then the rest are resubmitted`);
  let t0 = now();
  for (let i = 0; i < finished.length; i += 10_000) {
    await run.mark(finished.slice(i, i + 10_000));
    live(`dones: ${fmt(Math.min(i + 10_000, finished.length))} marked`);
  }
  const markS = now() - t0;
  endLive();
  t0 = now();
  let pending = 0;
  for await (const _ of run.pending(all)) pending += 1;
  const pendS = now() - t0;
  return `dones: marked ${fmt(finished.length)} in ${markS.toFixed(1)} s (${rate(finished.length, markS)}); pending() checked ${fmt(tasks)} in ${pendS.toFixed(1)} s (${rate(tasks, pendS)}): ${fmt(pending)} to resubmit`;
}

/** doloop: workers lease the most overdue ids, update them, report them done. */
async function loopRound(conn: Connection, ids: number, say: (s: string) => Promise<void>): Promise<string> {
  const loop = await conn.tr.createLoop('demo_pages', { idType: 'int' });
  await loop.add(Array.from({ length: ids }, (_, i) => i + 1));
  await say(`loop: ${fmt(ids)} page ids; 4 workers get(100) -> update -> did() until every page is fresh`);
  const t0 = now();
  let updated = 0;
  const seen = new Set<number>();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (;;) {
        const batch = await loop.get(100);
        if (batch.length === 0) return;
        await loop.did(batch);
        for (const id of batch) seen.add(id);
        updated += batch.length;
        live(`loop: ${fmt(updated)} updated`);
      }
    }),
  );
  const seconds = now() - t0;
  endLive();
  const stats = await loop.stats();
  const exact = seen.size === updated && updated === ids ? 'each once' : `${fmt(updated - seen.size)} twice, ${fmt(ids - seen.size)} missed`;
  return `loop: ${fmt(updated)} ids leased, updated and reported in ${seconds.toFixed(1)} s (${rate(updated, seconds)}), ${exact}; ${stats.locked} still locked`;
}

/**
 * `taskrow demo`: the main demo. Without --url it starts an embedded server through
 * @taskrow/servers (saying what it starts, or what is missing and how to get it) and stops it after.
 */
export const demoCommand: Command = async (argv, out) => {
  const { values } = parse(argv, { jobs: { type: 'string' }, tasks: { type: 'string' }, ids: { type: 'string' } });
  const jobs = intFlag(values, 'jobs', 20_000, 1, 10_000_000);
  const tasks = intFlag(values, 'tasks', 100_000, 1, 10_000_000);
  const ids = intFlag(values, 'ids', 10_000, 1, 10_000_000);
  const conn = await connect({ prefix: 'taskrow_demo_', ...values }, { embeddedByDefault: true });
  const say = (s: string): Promise<void> => out.write(`${s}\n`);
  try {
    const v = conn.tr.dialect;
    await say(`taskrow demo on ${v.engine} ${v.versionString} (tables prefixed ${conn.tr.prefix})`);
    await conn.tr.migrate();
    const summary = [await queueRound(conn, jobs, say), await donesRound(conn, tasks, say), await loopRound(conn, ids, say)];
    await say(`\nsummary\n${summary.map((s) => `  ${s}`).join('\n')}`);
    return 0;
  } finally {
    await conn.close();
  }
};
