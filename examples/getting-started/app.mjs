import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';

const pool = mysql.createPool(process.env.DATABASE_URL);
const tr = await taskrow(pool);
await tr.migrate();

const emails = tr.queue('emails');
emails.work(async (job) => console.log(`sending a welcome email to ${job.payload}`));
const { id } = await emails.enqueue('ada@example.com');
await emails.waitFor(id);

await tr.close();
await pool.end();
