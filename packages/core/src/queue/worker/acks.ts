import { performance } from 'node:perf_hooks';
import { LeaseLostError } from '../model/errors.js';
import { MAX_CLAIM } from '../model/options.js';
import type { FailOutcome, Job, JobRef } from '../model/types.js';
import type { WorkerSignals } from './signals.js';
import type { Held } from './leases.js';

/** The acks a worker sends. */
export interface AckPort {
  /** Completes `refs`, storing the results given (JSON text by job id) when finished jobs are kept. */
  complete(refs: readonly JobRef[], results?: ReadonlyMap<number, string>): Promise<void>;
  fail(ref: JobRef, error: unknown): Promise<FailOutcome>;
  release(refs: readonly JobRef[]): Promise<void>;
}

/** Counters the worker reports (`WorkerCounts`). */
export interface Counts {
  completed: number;
  failed: number;
  lost: number;
}

/**
 * A worker's acks: completions go out in batches (handlers finishing in the same burst share one;
 * completions queued while a batch is written go in the next); fails one by one; releases in one
 * batch. Every ack is tracked until written, so `settled()` can wait for all of them. `done(h)` is
 * called once per job whatever the outcome; an ack that fails for another reason than a lost lease
 * is reported and its jobs come back when their leases expire.
 */
export class AckBatcher<P> {
  private readonly toComplete: Held<P>[] = [];
  private flushing: Promise<void> | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly port: AckPort,
    private readonly counts: Counts,
    private readonly done: (h: Held<P>) => void,
    private readonly signals: WorkerSignals<P>,
  ) {}

  private report(err: unknown): void {
    this.signals.error(err);
  }

  complete(h: Held<P>): void {
    this.toComplete.push(h);
    this.flush();
  }

  fail(h: Held<P>, error: unknown): void {
    this.track(
      this.port
        .fail(h.job, error)
        .then(
          (outcome) => {
            this.counts.failed += 1;
            this.signals.failed(h.job, error, outcome);
          },
          (err: unknown) => {
            if (!(err instanceof LeaseLostError)) return this.report(err);
            this.counts.lost += 1;
            this.signals.leaseLost(h.job, err);
          },
        )
        .finally(() => this.done(h)),
    );
  }

  /** Gives `list` back; resolves to the number released. */
  async release(list: Held<P>[]): Promise<number> {
    if (list.length === 0) return 0;
    try {
      await this.port.release(list.map((h) => h.job));
      return list.length;
    } catch (err) {
      if (err instanceof LeaseLostError) return err.applied.length;
      this.report(err);
      return 0;
    } finally {
      list.forEach(this.done);
    }
  }

  /** Resolves once every ack started so far has been written (or has failed). */
  async settled(): Promise<void> {
    while (this.flushing || this.inFlight.size > 0) await Promise.allSettled([this.flushing, ...this.inFlight]);
  }

  private track(p: Promise<unknown>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private flush(): void {
    if (this.flushing || this.toComplete.length === 0) return;
    this.flushing = this.drain().finally(() => {
      this.flushing = undefined;
      this.flush();
    });
  }

  /**
   * Takes the completions waiting for the next batch (at most `MAX_CLAIM`), for a claim to carry:
   * the caller MUST pass them to `send`.
   */
  take(): Held<P>[] {
    return this.toComplete.splice(0, MAX_CLAIM);
  }

  /**
   * Writes the completion of `batch` through `write` (which rejects with `LeaseLostError` when
   * some jobs were not held) and tells how it went: counts, events, each job `done`.
   */
  send(batch: Held<P>[], write: (refs: readonly Job<P>[], results: ReadonlyMap<number, string> | undefined) => Promise<void>): Promise<void> {
    const sending = this.write(batch, write);
    this.track(sending);
    return sending;
  }

  private async drain(): Promise<void> {
    await new Promise((r) => setImmediate(r)); // handlers finishing in the same burst join this batch
    while (this.toComplete.length > 0) await this.write(this.take(), (refs, results) => this.port.complete(refs, results));
  }

  private async write(batch: Held<P>[], write: (refs: readonly Job<P>[], results: ReadonlyMap<number, string> | undefined) => Promise<void>): Promise<void> {
    try {
      const results = new Map(batch.flatMap((h) => (h.result === undefined ? [] : [[h.job.id, h.result] as const])));
      const sentAt = performance.now();
      await write(
        batch.map((h) => h.job),
        results.size > 0 ? results : undefined,
      );
      this.signals.acked(batch.length, performance.now() - sentAt);
      this.counts.completed += batch.length;
      for (const h of batch) this.signals.completed(h.job, h.value);
    } catch (err) {
      if (err instanceof LeaseLostError) {
        this.counts.completed += err.applied.length;
        this.counts.lost += err.lost.length;
        for (const h of batch) {
          if (err.lost.includes(h.job.id)) this.signals.leaseLost(h.job, err);
          else this.signals.completed(h.job, h.value);
        }
      } else this.report(err);
    }
    batch.forEach(this.done);
  }
}
