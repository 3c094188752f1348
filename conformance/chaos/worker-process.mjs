// One worker process of chaos scenarios e and f (see workers.chaos.ts, doorbell.chaos.ts). Runs
// `queue.work()` with 2 s leases; each handler writes its effect row and completes its job in one
// transaction, and appends to this process's ledger file (outside the database, written
// synchronously so a SIGKILL cannot lose a line already written): `run <seq> <id> <token>` when a
// handler starts, `done ...` once its transaction committed, `error <message>` for what the worker
// reports. Scenario f sets CHAOS_DOORBELL=1 (workers sleep on the doorbell, CHAOS_POLL milliseconds
// between polls) and CHAOS_APP=<n>: n loops of the application's own statements on the same pool, each a short
// `SELECT SLEEP`, and `stray <id>` for one that a `KILL QUERY` interrupted while its connection
// stayed alive (a ring that reached a connection its sleeper had given back); `app <n>` every 50
// statements that ran. Scenario g sets CHAOS_TIMEOUT=<ms>: the handler's own statements and new
// connections give up after that long (its connections go through a proxy that blackholes them),
// and a `run` line ends with the wall-clock time the handler started.
import { appendFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';

const { CHAOS_URL: url, CHAOS_PREFIX: prefix, CHAOS_EFFECTS: effects, CHAOS_LEDGER: ledger } = process.env;
const queue = process.env.CHAOS_QUEUE ?? 'e';
const doorbell = process.env.CHAOS_DOORBELL === '1';
const log = (line) => appendFileSync(ledger, `${line}\n`);
const timeout = process.env.CHAOS_TIMEOUT ? Number(process.env.CHAOS_TIMEOUT) : undefined;
const pool = mysql.createPool({ uri: url, connectionLimit: Number(process.env.CHAOS_POOL ?? 4), ...(timeout ? { connectTimeout: timeout } : {}) });
pool.on('connection', (c) => c.on('error', () => undefined));
const tr = await taskrow(pool, { prefix, statementTimeout: 2000 });
const worker = tr.queue(queue).work(
  async (job) => {
    const { seq } = job.payload;
    log(`run ${seq} ${job.id} ${job.token} ${job.attempt}${timeout ? ` ${Date.now()}` : ''}`);
    await new Promise((r) => setTimeout(r, Math.random() * 10));
    const conn = await pool.getConnection();
    const q = (sql, params) => conn.query(timeout ? { sql, timeout } : sql, params);
    let broken = false;
    try {
      await q('BEGIN');
      await q(`INSERT INTO \`${effects}\` (seq, job_id, token, pid) VALUES (?, ?, ?, ?)`, [seq, job.id, job.token, process.pid]);
      await tr.in(conn).queue(queue).complete(job);
      await q('COMMIT');
      log(`done ${seq} ${job.id} ${job.token} ${job.attempt}`);
    } catch (err) {
      broken = true;
      // Behind a silent network, a ROLLBACK would queue behind the statement still in flight on
      // the connection: destroying it rolls the transaction back on the server instead.
      if (!timeout) await q('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      if (broken && timeout) conn.destroy();
      else conn.release();
    }
  },
  {
    concurrency: 4,
    batchSize: 8,
    lease: 2000,
    pollInterval: Number(process.env.CHAOS_POLL ?? 50),
    doorbell,
    onError: (err) =>
      log(
        `error ${String(err?.code ?? '')} ${String(err?.message ?? err)
          .replace(/\s+/g, ' ')
          .slice(0, 200)}`,
      ),
  },
);

/** One application statement: `stray` when a KILL QUERY interrupted it and its connection is still alive. */
async function appStatement() {
  const conn = await pool.getConnection();
  let interrupted = false;
  try {
    // MySQL's SLEEP() returns 1 when interrupted; MariaDB's raises error 1317.
    const [rows] = await conn.query('SELECT SLEEP(0.005) AS s');
    interrupted = Number(rows[0]?.s) === 1;
  } catch (err) {
    interrupted = err?.errno === 1317;
  }
  const alive = await conn.query('SELECT 1').then(
    () => true,
    () => false,
  );
  if (alive) conn.release();
  else conn.destroy();
  if (interrupted && alive) log(`stray ${conn.threadId}`);
  return alive;
}

let app = 0;
for (let i = 0; i < Number(process.env.CHAOS_APP ?? 0); i++) {
  void (async () => {
    for (;;) {
      if (!(await appStatement().catch(() => false))) continue;
      app += 1;
      if (app % 50 === 0) log(`app ${app}`);
    }
  })();
}
// `stop` from the test: stops the worker, then answers `stopped` (scenario g: a stop MUST NOT wait
// on a connection the network lost).
process.on('message', (m) => {
  if (m === 'stop') void worker.stop({ timeout: 5000 }).then(() => process.send?.('stopped'));
});
process.send?.('ready');
