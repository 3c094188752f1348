/**
 * Admission: per-key concurrency limits (the slots table), rate limits, pause and resume, and the
 * purges of idle keys.
 */
export { purgeIdleKeys, purgeIdleKeysNow } from './key-purge.js';
export { pausedSince, pauseQueue, resumeQueue } from './pause.js';
export { getLimit, limitArgs, setLimit } from './limits.js';
export { getRate, rateArg, setRate } from './rate.js';
