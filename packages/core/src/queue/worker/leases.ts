import { performance } from 'node:perf_hooks';
import { slices } from '../../chunk.js';
import type { LeaseDeadline } from '../../engine/deadline.js';
import { isSettled } from '../model/held.js';
import { LeaseLostError } from '../model/errors.js';
import { MAX_CLAIM } from '../model/options.js';
import type { Job, JobRef } from '../model/types.js';

/**
 * A handler's abort signal, made when first read: a handler that never reads it costs no
 * `AbortController`. An `abort` before that read makes the signal aborted already, with the same
 * reason; only the first `abort` counts.
 */
export class JobAbort {
  private controller: AbortController | undefined;
  private aborted = false;
  private reason: unknown;

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/** One job a worker holds, from its claim until its ack. */
export interface Held<P> {
  readonly job: Job<P>;
  /** The handler's `signal`. */
  readonly abort: JobAbort;
  /** The lease on the local monotonic clock; aborts the handler's signal when it ends unconfirmed. */
  readonly lease: LeaseDeadline;
  started: boolean;
  /** Handed to complete / fail / release: no longer extended, no longer ours to abort. */
  acking: boolean;
  /** An extend of this job is in flight. */
  extending: boolean;
  /** What the handler returned. */
  value?: unknown;
  /** What the handler returned, as JSON text, when finished jobs are kept. */
  result?: string;
}

/** Extends leases by `ms` milliseconds, giving up waiting after `boundMs` (see `Executor.within`). */
export type ExtendFn = (refs: readonly JobRef[], ms: number, boundMs: number) => Promise<unknown>;

/** The abort reason of a job whose lease ended on the local clock before an extension was confirmed. */
export function leaseEnded(id: number): LeaseLostError {
  return new LeaseLostError('keep', [id], [], 'its lease ended (counted from when it was last claimed or extended) before an extension was confirmed');
}

/**
 * The worker's heartbeat: every `lease / 4` it extends, in batches, the jobs it still holds whose
 * lease is past half-life. MUST extend exactly the jobs the worker still holds: jobs acked by the
 * worker or by the handler itself (through any queue handle) are left out and forgotten. Extends
 * run unawaited, each bounded by the time left on its earliest lease, so a hung extend never
 * delays the next beat; a job with an extend in flight is not extended again meanwhile. A job an
 * extend reports lost is lost; any other failure is reported and the job's local deadline decides.
 */
export class Heartbeat<P> {
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly held: Map<number, Held<P>>,
    private readonly leaseMs: number,
    private readonly extend: ExtendFn,
    private readonly lose: (id: number, reason: LeaseLostError) => void,
    private readonly report: (err: unknown) => void,
  ) {
    this.timer = setInterval(() => this.beat(), Math.max(20, leaseMs / 4));
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One beat: picks the due jobs and starts their extends. */
  beat(): void {
    const now = performance.now();
    const halfLife = this.leaseMs / 2;
    const due: Held<P>[] = [];
    for (const h of this.held.values()) {
      if (h.acking || h.extending || h.lease.expired) continue;
      if (isSettled(h.job)) {
        // Acked by the handler itself: not ours to extend any more.
        h.lease.stop();
        continue;
      }
      if (h.lease.remaining(now) < halfLife) due.push(h);
    }
    for (const part of slices(due, MAX_CLAIM)) void this.extendBatch(part);
  }

  private async extendBatch(part: Held<P>[]): Promise<void> {
    for (const h of part) h.extending = true;
    const sentAt = performance.now();
    const bound = Math.min(...part.map((h) => h.lease.remaining(sentAt)));
    try {
      await this.extend(
        part.map((h) => h.job),
        this.leaseMs,
        bound,
      );
      for (const h of part) h.lease.renewed(sentAt);
    } catch (err) {
      if (!(err instanceof LeaseLostError)) return void this.report(err);
      for (const id of err.lost) this.lose(id, err);
      const kept = new Set(err.applied);
      for (const h of part) if (kept.has(h.job.id)) h.lease.renewed(sentAt);
    } finally {
      for (const h of part) h.extending = false;
    }
  }
}
