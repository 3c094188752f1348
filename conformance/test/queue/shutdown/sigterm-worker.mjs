import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';
import { handle } from './handle.mjs';

const pool = mysql.createPool(process.env.DATABASE_URL);
const tr = await taskrow(pool);
tr.queue('emails').work(handle, { concurrency: 8 });

// On SIGTERM: stop the worker (running jobs finish, unstarted ones go back to the queue), then end the pool.
process.once('SIGTERM', async () => {
  await tr.close({ timeout: 30_000 });
  await pool.end();
});
