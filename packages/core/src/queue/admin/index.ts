/**
 * Administration: listing and reading jobs, queue stats, removing jobs that have not started, dead
 * jobs (retry, purge) and purges of finished jobs.
 */
export { purgeDeadJobs, retryDeadJobs } from './dead.js';
export { purgeRetained } from './retention.js';
export { getJobInfo, listArgs, listJobs } from './list.js';
export { queueStats } from './stats.js';
export { MAX_IDS, jobIdsArg, removeJobs } from './remove.js';
export { promoteJobs } from './promote.js';
