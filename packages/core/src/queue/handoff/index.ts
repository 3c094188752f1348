/**
 * Hand-offs: an enqueue that leases its new jobs straight to an idle worker, which runs them
 * without claiming: a worker of the same instance (`local-hand.ts`), or a sleeper of another
 * process woken by the doorbell (`hand-call.ts`). Only when a claim would take the jobs now.
 */
export { handOff } from './local-hand.js';
