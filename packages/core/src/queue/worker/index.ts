/**
 * The worker loop: claims, runs handlers with bounded concurrency, keeps leases alive, batches acks, emits events.
 */
export { startWorker, type Handee } from './worker.js';
