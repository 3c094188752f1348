/**
 * Wake-ups: in-process wake-ups of idle workers, the doorbell (sleeping claims woken by a ring from another
 * process), and hand-offs (new jobs leased straight to an idle worker).
 */
export { onEnqueue } from './wake.js';
export { handOff } from './local-hand.js';
export { watchDoorbell, type HandTarget } from './doorbell.js';
export { announce, EarlyRing, ringAhead, ringInCall } from './ring.js';
