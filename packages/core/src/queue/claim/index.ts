/**
 * Claiming: the locking read of ready jobs (`FOR UPDATE SKIP LOCKED`), their leases and fencing tokens, the
 * claim procedure, the per-process read position (cursor) and the promotion of due delayed and expired jobs.
 */
export { claimable } from './claimable.js';
export { claimJobs, handedJobs, type ClaimArgs } from './claim.js';
export { claimCursor } from '../model/cursor.js';
