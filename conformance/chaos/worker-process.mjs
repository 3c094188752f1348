// One worker process of chaos scenario e (see workers.chaos.ts). Runs `queue.work()` with 2 s
// leases; each handler writes its effect row and completes its job in one transaction, and appends
// to this process's ledger file (outside the database, written synchronously so a SIGKILL cannot
// lose a line already written): `run <seq> <id> <token>` when a handler starts, `done ...` once
// its transaction committed, `error <message>` for what the worker reports.
import { appendFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';

const { CHAOS_URL: url, CHAOS_PREFIX: prefix, CHAOS_EFFECTS: effects, CHAOS_LEDGER: ledger } = process.env;
const log = (line) => appendFileSync(ledger, `${line}\n`);
const pool = mysql.createPool({ uri: url, connectionLimit: 4 });
pool.on('connection', (c) => c.on('error', () => undefined));
const tr = await taskrow(pool, { prefix, statementTimeout: 2 });
tr.queue('e').work(
  async (job) => {
    const { seq } = job.payload;
    log(`run ${seq} ${job.id} ${job.token} ${job.attempt}`);
    await new Promise((r) => setTimeout(r, Math.random() * 10));
    const conn = await pool.getConnection();
    try {
      await conn.beginTransaction();
      await conn.query(`INSERT INTO \`${effects}\` (seq, job_id, token, pid) VALUES (?, ?, ?, ?)`, [seq, job.id, job.token, process.pid]);
      await tr.in(conn).queue('e').complete(job);
      await conn.commit();
      log(`done ${seq} ${job.id} ${job.token} ${job.attempt}`);
    } catch (err) {
      await conn.rollback().catch(() => undefined);
      throw err;
    } finally {
      conn.release();
    }
  },
  { concurrency: 4, batchSize: 8, lease: 2, pollInterval: 0.05, onError: (err) => log(`error ${String(err?.code ?? '')} ${String(err?.message ?? err).replace(/\s+/g, ' ').slice(0, 200)}`) },
);
process.send?.('ready');
