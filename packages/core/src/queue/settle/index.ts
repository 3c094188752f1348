/**
 * Settling a held job: complete (with its result), fail (retry or dead), release, extend; every write fenced by
 * the claim's token, retried exactly after a lost reply; results and progress; completions carried into the next claim.
 */
export { refsArg } from './ack.js';
export { completeAndClaim } from './complete-claim.js';
export { completeJobs, extendJobs, failJob, releaseJobs } from './settle.js';
export type { AckContext } from './context.js';
export { reportProgress, waitForArgs, waitForJob } from './results.js';
