/**
 * The Queue's stored procedures, each a `Routine` kept beside the code that calls it, installed by
 * content (`installRoutines`) and called through `call.ts`, which finds one missing and takes the
 * path without it.
 */
import { CLAIM_JOBS_ROUTINE } from '../claim/call.js';
import { ENQUEUE_JOB_ROUTINE } from '../enqueue/call.js';
import { ENQUEUE_JOBS_ROUTINE } from '../enqueue/many-call.js';
import { ENQUEUE_JOB_AND_RING_ROUTINE, ENQUEUE_JOBS_AND_RING_ROUTINE } from '../enqueue/ring-call.js';
import { COMPLETE_JOBS_ROUTINE } from '../settle/complete-call.js';
import { COMPLETE_CLAIM_JOBS_ROUTINE } from '../settle/complete-claim-call.js';
import { ENQUEUE_JOB_AND_HAND_ROUTINE } from '../wake/hand-call.js';
import { ENQUEUE_JOBS_LEASED_ROUTINE } from '../wake/local-hand.js';
import { RING_SLEEPERS_ROUTINE } from '../wake/ring-call.js';
import type { Routine } from './routine.js';

export { installRoutines, routineStatements, type RoutinesResult } from './install.js';
export type { Routine } from './routine.js';

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
