import { setTimeout as sleep } from 'node:timers/promises';
import type { Job, JobContext } from '@taskrow/core';

/** What the service's jobs carry. */
export type Payload =
  /** The bulk of the work: make a thumbnail of one image. */
  | { readonly kind: 'thumbnail'; readonly image: number }
  /** Urgent mail, enqueued with a higher priority after `queuedBehind` thumbnails. */
  | { readonly kind: 'email'; readonly to: string; readonly queuedBehind: number }
  /** A reminder enqueued with a delay. */
  | { readonly kind: 'reminder'; readonly note: string }
  /** A daily report, enqueued with a dedup key: only one per day is live at a time. */
  | { readonly kind: 'report'; readonly day: string }
  /** Fails its first `failures` attempts, then succeeds: retried with backoff. */
  | { readonly kind: 'flaky'; readonly failures: number }
  /** Always fails: dead once its attempts are used up. */
  | { readonly kind: 'poison' };

/** What the handler saw, for the summary. */
export interface Tally {
  /** Handler runs that returned (the worker then completes the job). */
  succeeded: number;
  /** Handler runs that threw (the worker then fails the job: retry or dead). */
  threw: number;
  thumbnailsStarted: number;
  /** Jobs whose last attempt failed: dead now. */
  readonly dead: string[];
}

/**
 * The service's handler: resolving completes the job, throwing fails it (the worker retries it
 * after an exponential backoff, or makes it dead once its attempts are used up). Waits honour
 * `signal`, which fires when the lease is lost or `stop()`'s grace period ends.
 */
export function handler(workMs: number, log: (line: string) => void, tally: Tally) {
  return async (job: Job<Payload>, { signal }: JobContext): Promise<void> => {
    const p = job.payload;
    const fail = (message: string): never => {
      tally.threw += 1;
      const last = job.attempt >= job.maxAttempts;
      log(
        `job ${job.id} (${p.kind}) attempt ${job.attempt} of ${job.maxAttempts} failed: ${message}; ${last ? 'it is dead now' : 'it is retried after a backoff'}`,
      );
      if (last) tally.dead.push(`job ${job.id} (${p.kind}) after ${job.attempt} attempts: ${message}`);
      throw new Error(message);
    };
    switch (p.kind) {
      case 'thumbnail':
        tally.thumbnailsStarted += 1;
        await sleep(workMs, undefined, { signal });
        break;
      case 'email':
        log(
          `job ${job.id} (email to ${p.to}, priority ${job.priority}) ran ahead of about ${Math.max(0, p.queuedBehind - tally.thumbnailsStarted)} older thumbnail jobs`,
        );
        break;
      case 'reminder':
        log(`job ${job.id} (reminder "${p.note}") ran at ${job.runAt.toISOString()}, as scheduled`);
        break;
      case 'report':
        log(`job ${job.id} (report for ${p.day}) ran once`);
        break;
      case 'flaky':
        if (job.attempt <= p.failures) fail('the image service timed out');
        log(`job ${job.id} (flaky) succeeded on attempt ${job.attempt}`);
        break;
      case 'poison':
        fail('cannot decode the image');
    }
    tally.succeeded += 1;
  };
}
