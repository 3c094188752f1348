/**
 * Enqueueing: validated rows, dedup keys, the single and batch enqueue procedures, coalesced batches of
 * concurrent `enqueue()` calls, and the receipts that make a retried enqueue exact.
 */
export { insertJobs, jobRows } from './enqueue.js';
export { callable } from './call.js';
export { batchCallable } from './many-call.js';
export { coalescedEnqueue, coalescible } from './coalesce.js';
export { producerOf } from './producer.js';
export { purgeStaleKeys, purgeStaleKeysNow } from './dedup.js';
