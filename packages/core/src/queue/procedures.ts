/** Every stored procedure of the Queue, in the order `migrate()` creates them (see `routines/`). */
import { CLAIM_JOBS_ROUTINE } from './claim/call.js';
import { ENQUEUE_JOB_ROUTINE } from './enqueue/call.js';
import { ENQUEUE_JOBS_ROUTINE } from './enqueue/many-call.js';
import { ENQUEUE_JOB_AND_HAND_ROUTINE } from './handoff/hand-call.js';
import { ENQUEUE_JOBS_LEASED_ROUTINE } from './handoff/local-hand.js';
import type { Routine } from './routines/routine.js';

/**
 * Every routine, in the order they are created: one that calls another comes after it. Each
 * stays only where `pnpm bench routines` shows its path faster with it than without it (see
 * docs/performance.md).
 */
export const ROUTINES: readonly Routine[] = [
  ENQUEUE_JOB_ROUTINE,
  ENQUEUE_JOBS_ROUTINE,
  ENQUEUE_JOB_AND_HAND_ROUTINE,
  ENQUEUE_JOBS_LEASED_ROUTINE,
  CLAIM_JOBS_ROUTINE,
];

/**
 * Procedures earlier builds installed and this build no longer calls (names without the prefix):
 * `migrate()` drops each one it finds. A process of an earlier build that calls one afterwards
 * finds it missing and takes its path without it.
 */
export const RETIRED_ROUTINES: readonly string[] = ['enqueue_job_and_ring', 'enqueue_jobs_and_ring', 'ring_sleepers', 'complete_claim_jobs', 'complete_jobs'];
