/**
 * Wake-ups: in-process wake-ups of idle workers, and the doorbell (sleeping connections of other
 * processes woken by a ring when jobs are enqueued).
 */
export { onEnqueue } from './wake.js';
export { watchDoorbell, type HandTarget } from './doorbell.js';
export { announce, EarlyRing, ringAhead, ringInCall } from './ring.js';
