// One scheduler process of the scheduler-processes test (see schedule-processes.test.ts): runs
// taskrow's scheduler until the parent sends 'stop', then reports how many jobs it enqueued.
import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';

const { SCHED_URL: url, SCHED_PREFIX: prefix } = process.env;
const pool = mysql.createPool({ uri: url, connectionLimit: 2 });
const tr = await taskrow(pool, { prefix });
const errors = [];
const scheduler = tr.schedules().start({ pollInterval: 1000, onError: (err) => errors.push(String(err)) });
process.on('message', async (msg) => {
  if (msg !== 'stop') return;
  await scheduler.stop();
  await pool.end();
  process.send?.({ enqueued: scheduler.enqueued, errors }, () => process.exit(0));
});
process.send?.('ready');
