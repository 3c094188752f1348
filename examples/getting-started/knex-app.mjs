import knex from 'knex';
import { taskrow } from '@taskrow/knex';

const db = knex({ client: 'mysql2', connection: process.env.DATABASE_URL });
const tr = await taskrow(db);
await tr.migrate();
await db.raw('CREATE TABLE IF NOT EXISTS signups (id INT AUTO_INCREMENT PRIMARY KEY, email VARCHAR(255) NOT NULL)');

const emails = tr.queue('emails');
emails.work(async (job) => console.log(`sending a welcome email to ${job.payload}`));

// The signup row and the job commit together; a rollback would undo both.
const { id } = await db.transaction(async (trx) => {
  await trx('signups').insert({ email: 'ada@example.com' });
  return tr.in(trx).queue('emails').enqueue('ada@example.com');
});
await emails.waitFor(id);

await tr.close();
await db.destroy();
