// One worker process of the queue crash test (see queue.crash.ts). It completes each job in the
// same transaction as the job's effect (a row in the completions table), so a SIGKILL at any
// moment leaves either both or neither. Arguments come from the environment.
import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';

const { CRASH_URL: url, CRASH_PREFIX: prefix, CRASH_QUEUE: name, CRASH_TABLE: completions } = process.env;
const pool = mysql.createPool({ uri: url, connectionLimit: 4 });
const tr = await taskrow(pool, { prefix });
const worker = tr.queue(name).work(
  async (job) => {
    await new Promise((r) => setTimeout(r, Math.random() * 4));
    const conn = await pool.getConnection();
    try {
      await conn.beginTransaction();
      await conn.query(`INSERT INTO \`${completions}\` (job_id, pid, attempt) VALUES (?, ?, ?)`, [job.id, process.pid, job.attempt]);
      await tr.in(conn).queue(name).complete(job);
      await conn.commit();
    } catch (err) {
      await conn.rollback().catch(() => undefined);
      throw err;
    } finally {
      conn.release();
    }
  },
  { concurrency: 8, batchSize: 16, lease: 2000, pollInterval: 50, onError: () => undefined },
);
process.on('SIGTERM', async () => {
  await worker.stop({ timeout: 5000 });
  await pool.end();
  process.exit(0);
});
process.send?.('ready');
