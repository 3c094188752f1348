/**
 * Administration: listing and reading jobs, queue stats, dead jobs (retry, purge) and purges of finished jobs.
 */
export { purgeDeadJobs, purgeFinished, retryDeadJobs } from './dead.js';
export { getJobInfo, listArgs, listJobs } from './list.js';
export { queueStats } from './stats.js';
