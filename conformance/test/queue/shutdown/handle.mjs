import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The job handler of `sigterm-worker.mjs`: some work (a few milliseconds), then the job's id and
 * payload appended to the ledger file named by LEDGER, a record kept outside the database.
 */
export async function handle(job) {
  await sleep(5 + Math.floor(Math.random() * 10));
  appendFileSync(process.env.LEDGER, `${job.id} ${job.payload}\n`);
}
