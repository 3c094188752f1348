/** Every stored procedure of the Queue, in the order `migrate()` creates them (see `routines/`). */
import { CLAIM_JOBS_ROUTINE } from './claim/call.js';
import { ENQUEUE_JOB_ROUTINE } from './enqueue/call.js';
import { ENQUEUE_JOBS_ROUTINE } from './enqueue/many-call.js';
import { ENQUEUE_JOB_AND_RING_ROUTINE, ENQUEUE_JOBS_AND_RING_ROUTINE } from './enqueue/ring-call.js';
import { COMPLETE_JOBS_ROUTINE } from './settle/complete-call.js';
import { COMPLETE_CLAIM_JOBS_ROUTINE } from './settle/complete-claim-call.js';
import { ENQUEUE_JOB_AND_HAND_ROUTINE } from './handoff/hand-call.js';
import { ENQUEUE_JOBS_LEASED_ROUTINE } from './handoff/local-hand.js';
import { RING_SLEEPERS_ROUTINE } from './wake/ring-call.js';
import type { Routine } from './routines/routine.js';

/** Every routine, in the order they are created: one that calls another comes after it. */
export const ROUTINES: readonly Routine[] = [
  ENQUEUE_JOB_ROUTINE,
  ENQUEUE_JOBS_ROUTINE,
  RING_SLEEPERS_ROUTINE,
  ENQUEUE_JOB_AND_RING_ROUTINE,
  ENQUEUE_JOBS_AND_RING_ROUTINE,
  ENQUEUE_JOB_AND_HAND_ROUTINE,
  ENQUEUE_JOBS_LEASED_ROUTINE,
  CLAIM_JOBS_ROUTINE,
  COMPLETE_CLAIM_JOBS_ROUTINE,
  COMPLETE_JOBS_ROUTINE,
];
