import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { LeaseDeadline } from '../../engine/deadline.js';
import { msArg } from '../../validate.js';
import { isSettled } from '../model/held.js';
import { isClientClosed } from '../../errors.js';
import type { LeaseLostError } from '../model/errors.js';
import { encodePayload } from '../model/payload.js';
import { toMicros } from '../model/options.js';
import type { Handed } from '../model/claimed.js';
import type { CompletedAndClaimed } from '../settle/complete-claim.js';
import type { ClaimOptions, Job, JobRef } from '../model/types.js';
import type { Bell, Runner, Siblings } from '../wake/wake.js';
import { AckBatcher, type AckPort, type Counts } from './acks.js';
import { Alarm } from './alarm.js';
import type { WorkerEventMap } from '../model/events.js';
import { WorkerSignals } from './signals.js';
import { Heartbeat, JobAbort, leaseEnded, type ExtendFn, type Held } from './leases.js';
import { workerSettings, type WorkerSettings } from './settings.js';
import type { JobContext, JobHandler, StopResult, QueueWorker, WorkerCounts, WorkerOptions } from '../model/worker-types.js';

/** Milliseconds between a worker's purges (kept finished jobs, idle concurrency key rows). */
const PURGE_EVERY_MS = 60_000;

/** What a worker needs from its queue. */
export interface WorkerQueue<P> extends AckPort {
  /** Claims (see `claimJobs`); `reading` is called as the claim is about to read the queue. */
  claim(options: ClaimOptions, reading: () => void): Promise<Job<P>[]>;
  /** Completes `refs` and claims, in one transaction when it can (see `completeAndClaim`). */
  completeAndClaim(
    refs: readonly JobRef[],
    results: ReadonlyMap<number, string> | undefined,
    options: ClaimOptions,
    reading: () => void,
  ): Promise<CompletedAndClaimed<P>>;
  extend: ExtendFn;
  /** Housekeeping the worker runs every `PURGE_EVERY_MS`: kept finished jobs past their retention, idle key rows. */
  purge(): Promise<number>;
  /** True when finished jobs are kept (a job's result is then stored). */
  readonly keepsFinished: boolean;
  progress(ref: JobRef, value: unknown): Promise<void>;
  /** Tells `bell` of enqueues into this queue that committed in this process (see `wake.ts`); returns the unsubscribe. */
  onEnqueue(bell: Bell): Siblings;
  /**
   * Sleeps on the queue's doorbell (another process's enqueue rings this process's workers, see
   * `doorbell.ts`), offering `handee` as the runner of a job a ring hands over (see `wake/hand-call.ts`);
   * returns the unwatch.
   */
  watchDoorbell(handee?: Handee<P>): () => Promise<void>;
  readonly name: string;
  /** Whether a claim could take anything now (one cheap statement; see `claimable`). */
  claimable(group: string | undefined): Promise<boolean>;
  /** Gives back what the worker's claims and completions kept (a pooled connection) once they ended. MUST NOT reject. */
  close(): Promise<void>;
}

/** A worker as the runner of jobs a ring hands its process's sleeper (see `wake/hand-call.ts`). */
export interface Handee<P> {
  /** The lease (microseconds) of a job handed to it. */
  readonly leaseMicros: number;
  /** Whether it has a handler slot free now. */
  free(): boolean;
  /** Runs `handed` (read by a statement sent at `readAt`, `performance.now()`), or gives them back when it is stopping. MUST NOT throw. */
  take(handed: Handed<P>, readAt: number): void;
}

/** What `work()` returns: the worker's events, its counts and `stop()`. */
class Handle<P> extends EventEmitter<WorkerEventMap<P>> implements QueueWorker<P> {
  constructor(
    private readonly countsOf: () => WorkerCounts,
    private readonly stopWith: (timeoutMs: number) => Promise<StopResult>,
  ) {
    super();
  }

  get counts(): WorkerCounts {
    return this.countsOf();
  }

  stop(options: { timeout?: number } = {}): Promise<StopResult> {
    return this.stopWith(msArg('stop() timeout', options.timeout ?? 30_000, 0, 24 * 3600 * 1000));
  }
}

/**
 * Runs `handler` over jobs of a queue (see `Queue.work`). Claims in batches when it has a free
 * handler slot and nothing claimed left to start; while the queue is idle it waits 10 ms, 20 ms,
 * ... up to `pollInterval` between claims (every claim is a transaction that commits, so each poll
 * sees new jobs), and claims at once when an enqueue into the queue commits in this process. Each held job's lease is kept on the local monotonic clock from when its claim
 * or last confirmed extend was sent (`LeaseDeadline`): when it ends, the handler's `signal` aborts
 * with `LEASE_LOST` and the worker never acks the job. Acks go out in batches (`AckBatcher`),
 * leases are extended at half-life (`Heartbeat`). What happens is told through `WorkerSignals`:
 * events, the logger, diagnostics channels.
 */
export function startWorker<P>(queue: WorkerQueue<P>, handler: JobHandler<P>, options: WorkerOptions | undefined): QueueWorker<P> {
  return new Worker(queue, handler, workerSettings(handler, options)).handle;
}

class Worker<P> {
  private readonly held = new Map<number, Held<P>>();
  private readonly pending: Held<P>[] = [];
  private readonly counts: Counts = { completed: 0, failed: 0, lost: 0 };
  private readonly alarm = new Alarm();
  private readonly acks: AckBatcher<P>;
  private readonly heartbeat: Heartbeat<P>;
  private readonly purger: NodeJS.Timeout;
  private readonly looping: Promise<void>;
  /** The other workers of this queue in this process: wake-ups and shared polls (see `wake.ts`). */
  private readonly siblings: Siblings;
  /** Ends this worker's watch of the doorbell (`doorbell: true`). */
  private readonly unwatch: (() => Promise<void>) | undefined;
  readonly handle: Handle<P>;
  private readonly signals: WorkerSignals<P>;
  private running = 0;
  /** Handler slots held for jobs an enqueue of this process is leasing to this worker (see `reserve`). */
  private reserved = 0;
  /** The loop waits for every handler slot to be taken no longer: a finishing handler wakes it. */
  private waitingForSlot = false;
  /** The loop naps between polls of an idle queue (no claim of its is in flight). */
  private napping = false;
  /** A claim is on its way and has not yet read the queue: it takes jobs committed meanwhile without a ring. */
  private beforeRead = false;
  /** Jobs of enqueues that counted on the claim `beforeRead` (see `wake.ts`). */
  private promised = 0;
  /** When the loop's current (or last) nap began (`performance.now()`). */
  private nappedAt = -Infinity;
  /** The last claim found nothing while no handler ran (`idle` was emitted). */
  private idleNow = false;
  /** An enqueue into the queue (or an ack that admitted blocked jobs) committed in this process since the last claim. */
  private enqueuedSince = false;
  private stopping = false;
  /** A closed client was reported: later errors of the same kind are not. */
  private halted = false;
  private drained: (() => void) | undefined;
  private stopped: Promise<StopResult> | undefined;

  constructor(
    private readonly queue: WorkerQueue<P>,
    private readonly handler: JobHandler<P>,
    private readonly s: WorkerSettings,
  ) {
    const report = (err: unknown): void => this.report(err);
    this.handle = new Handle(
      () => ({ ...this.counts }),
      (ms) => (this.stopped ??= this.stop(ms)),
    );
    this.signals = new WorkerSignals(this.handle, queue.name, s.logger, s.onError);
    this.acks = new AckBatcher(queue, this.counts, (h) => this.drop(h), this.signals);
    this.heartbeat = new Heartbeat(this.held, s.leaseMs, queue.extend, (id, reason) => this.lose(id, reason), report);
    this.purger = setInterval(() => void queue.purge().catch(report), PURGE_EVERY_MS);
    this.siblings = queue.onEnqueue({
      group: s.group,
      ring: () => {
        this.enqueuedSince = true;
        this.alarm.ring();
      },
      room: () => (this.stopping || this.full() ? 0 : this.s.batchSize - this.promised),
      stage: () => (this.napping ? 'napping' : this.beforeRead ? 'before-read' : 'busy'),
      cover: (jobs) => void (this.promised += jobs),
      // Only a worker of every group runs jobs an enqueue leases to it: any job of the queue may come.
      reserve: s.group === undefined ? (jobs) => this.reserve(jobs) : undefined,
    });
    // Only a worker of every group runs what a ring hands over: a ring hands any job of the queue.
    this.unwatch = s.doorbell ? queue.watchDoorbell(s.group === undefined ? this.handee() : undefined) : undefined;
    this.looping = this.loop();
  }

  /** This worker as the runner of jobs a ring hands over: held and started as a claim's would be, or released once it is stopping. */
  private handee(): Handee<P> {
    return {
      leaseMicros: toMicros(this.s.leaseMs),
      free: () => !this.stopping && this.running + this.pending.length + this.reserved < this.s.concurrency,
      take: (handed, readAt) => this.takeHanded(handed, readAt),
    };
  }

  /**
   * Holds `jobs` handler slots for the jobs an enqueue of this process leases to this worker (see
   * `local-hand.ts`), when that many are free and it is not stopping; they are free again once
   * the runner takes the jobs (and starts them at once) or cancels.
   */
  private reserve(jobs: number): Runner | undefined {
    if (this.stopping || this.running + this.pending.length + this.reserved + jobs > this.s.concurrency) return undefined;
    this.reserved += jobs;
    let held = true;
    const free = (): void => {
      if (held) [held, this.reserved] = [false, this.reserved - jobs];
    };
    return {
      leaseMicros: toMicros(this.s.leaseMs),
      take: (handed, sentAt) => {
        free();
        this.takeHanded(handed as Handed<P>, sentAt);
      },
      cancel: free,
    };
  }

  /** Jobs leased to this worker without a claim of its (a ring's or an enqueue's hand-off): held and started as a claim's would be, or released once it is stopping. */
  private takeHanded({ jobs, leaseFrom }: Handed<P>, readAt: number): void {
    if (this.stopping) return void this.queue.release(jobs).catch((err: unknown) => this.report(err));
    for (const job of jobs) this.hold(job, leaseFrom);
    this.told(jobs, readAt);
    this.startPending();
  }

  /**
   * Tells of an error (`error` event, `onError`). A closed client (the application ended its pool)
   * ends the worker instead: told once, then `halt`.
   */
  private report(err: unknown): void {
    if (!isClientClosed(err)) {
      this.signals.error(err);
      return;
    }
    if (this.halted) return;
    this.halted = true;
    this.signals.error(err);
    if (this.stopped !== undefined) return; // a stop() under way ends the worker
    this.stopped = this.halt(err);
    this.stopped.catch(() => undefined); // stop() hands the rejection to whoever asks
  }

  /**
   * Ends a worker whose client was closed under it: no statement can run, so nothing is acked or
   * given back (the leases end on the database clock and the jobs return to the queue). Running
   * handlers are aborted with `err`; timers and the doorbell watch end; rejects with `err`.
   */
  private async halt(err: unknown): Promise<StopResult> {
    this.stopping = true;
    this.siblings.unsubscribe();
    const asleep = this.unwatch?.().catch(() => undefined);
    this.alarm.ring();
    await this.looping;
    this.heartbeat.stop();
    clearInterval(this.purger);
    for (const h of this.held.values()) {
      h.lease.stop();
      h.abort.abort(err);
    }
    this.held.clear();
    this.pending.length = 0;
    await asleep;
    await this.queue.close();
    throw err;
  }

  private drop(h: Held<P>): void {
    h.lease.stop();
    if (this.held.get(h.job.id) === h) this.held.delete(h.job.id);
  }

  private ours(h: Held<P>): boolean {
    return this.held.get(h.job.id) === h && !h.acking && !h.lease.expired && !isSettled(h.job);
  }

  /** The lease is gone (ended on the local clock, or an extend found it lost): abort, forget, never ack. */
  private lose(id: number, reason: LeaseLostError): void {
    const h = this.held.get(id);
    if (!h || h.acking || isSettled(h.job)) return;
    this.counts.lost += 1;
    this.drop(h);
    const i = this.pending.indexOf(h);
    if (i >= 0) this.pending.splice(i, 1);
    h.abort.abort(reason);
    this.signals.leaseLost(h.job, reason);
  }

  private finish(h: Held<P>, ok: boolean, outcome: unknown): void {
    if (!this.ours(h)) {
      this.drop(h);
      return;
    }
    h.acking = true;
    if (!ok) {
      this.acks.fail(h, outcome);
      return;
    }
    h.value = outcome;
    if (outcome !== undefined && this.queue.keepsFinished) {
      try {
        h.result = encodePayload(outcome, `the result of job ${h.job.id}`);
      } catch (err) {
        this.report(err); // completed all the same: the handler's work is done
      }
    }
    this.acks.complete(h);
  }

  private start(h: Held<P>): void {
    this.running += 1;
    h.started = true;
    Promise.resolve()
      .then(() => this.signals.trace(h.job, async () => this.handler(h.job, this.context(h))))
      .then(
        (value: unknown) => this.finish(h, true, value),
        (err: unknown) => this.finish(h, false, err),
      )
      .finally(() => {
        this.running -= 1;
        if (this.running === 0) this.drained?.();
        if (this.waitingForSlot) this.alarm.ring();
      });
  }

  /** The handler's second argument: its `signal` is made when first read (see `JobAbort`). */
  private context(h: Held<P>): JobContext {
    return {
      get signal() {
        return h.abort.signal;
      },
      progress: (value) => this.queue.progress(h.job, value),
    };
  }

  private hold(job: Job<P>, sentAt: number): void {
    const lease = new LeaseDeadline(this.s.leaseMs, sentAt, () => this.lose(job.id, leaseEnded(job.id)));
    const h: Held<P> = { job, abort: new JobAbort(), lease, started: false, acking: false, extending: false };
    this.held.set(job.id, h);
    this.pending.push(h);
  }

  /** No claim now: claimed jobs wait for a slot, or every handler slot is taken. */
  private full(): boolean {
    return this.pending.length > 0 || this.running >= this.s.concurrency;
  }

  /** Starts claimed jobs while a handler slot is free. */
  private startPending(): void {
    while (this.running < this.s.concurrency && this.pending.length > 0) this.start(this.pending.shift()!);
  }

  /**
   * Claims while it has room. After a claim that found fewer jobs than it asked for, the queue had
   * no more ready: the next claim waits for an enqueue in this process (or an ack that admitted
   * blocked jobs), or for `claimable` (one statement) to find something, polled after 10 ms, 20 ms,
   * ... up to `pollInterval`. A worker that waits so MUST NOT claim on a handler finishing (only a
   * worker whose slots were all taken waits for that): with many workers draining a trickle, every
   * one of them would race for the same few new jobs, and most of their claims would find nothing.
   */
  private async loop(): Promise<void> {
    let idle = 0;
    const nap = async (): Promise<void> => {
      this.napping = true;
      this.nappedAt = performance.now();
      await this.alarm.nap(Math.min(this.s.pollMs, 10 * 2 ** Math.min(idle++, 20)));
      this.napping = false;
    };
    while (!this.stopping) {
      this.startPending();
      if (this.full()) {
        this.waitingForSlot = true;
        await this.alarm.nap(Infinity);
        this.waitingForSlot = false;
        continue;
      }
      const sentAt = performance.now();
      const enqueued = this.enqueuedSince;
      this.enqueuedSince = false;
      let jobs: Job<P>[];
      try {
        if (idle > 0 && !enqueued && !(await this.probe())) {
          await nap();
          continue;
        }
        jobs = await this.claim();
      } catch (err) {
        this.report(err);
        await nap();
        continue;
      }
      for (const job of jobs) this.hold(job, sentAt);
      this.told(jobs, sentAt);
      if (jobs.length >= this.s.batchSize) {
        idle = 0;
        this.siblings.wakeOne(); // more may wait: a napping sibling claims too
        continue;
      }
      // Short: the queue ran out. The next claim needs a reason (a ring, or a poll that finds something).
      this.startPending();
      if (this.full()) {
        idle = 1;
        continue;
      }
      if (jobs.length > 0) idle = 0;
      if (!this.stopping) await nap();
    }
  }

  /**
   * Claims a batch. Completions waiting for their batch go with it (`completeAndClaim`): a worker
   * draining a backlog completes one batch and claims the next in one transaction. A failure of
   * that transaction is reported as the completion's; the claim then found nothing.
   */
  private async claim(): Promise<Job<P>[]> {
    this.beforeRead = true;
    this.promised = 0;
    try {
      return await this.claimNow();
    } finally {
      // A claim that failed before its read leaves the jobs counted on it to its next claim.
      if (this.beforeRead && this.promised > 0) this.enqueuedSince = true;
      this.beforeRead = false;
      this.promised = 0;
    }
  }

  /** The claim reads the queue: enqueues from now on need a ring. */
  private readonly read = (): void => {
    if (!this.beforeRead) return;
    this.beforeRead = false;
    this.promised = 0;
    this.siblings.looked();
  };

  /**
   * Whether an idle worker should claim: a sibling that looked at the queue since this worker
   * began napping acted on what it saw (it claimed, and a full claim wakes another), so this one
   * naps on without a statement; otherwise `claimable` (one statement), and no claim when a
   * sibling looked meanwhile (its claim takes what this probe saw). One worker of a process then
   * polls for all of them; the queue is still looked at at least once per `pollInterval`.
   */
  private async probe(): Promise<boolean> {
    if (this.siblings.lookedSince(this.nappedAt)) return false;
    const sent = performance.now();
    this.siblings.looked();
    return (await this.queue.claimable(this.s.group)) && !this.siblings.lookedSince(sent);
  }

  private async claimNow(): Promise<Job<P>[]> {
    const options = { limit: this.s.batchSize, lease: this.s.leaseMs, group: this.s.group };
    const riders = this.acks.take();
    if (riders.length === 0) return this.queue.claim(options, this.read);
    let jobs: Job<P>[] = [];
    await this.acks.send(riders, async (refs, results) => {
      const out = await this.queue.completeAndClaim(refs, results, options, this.read);
      jobs = out.jobs;
      if (out.lost) throw out.lost;
    });
    return jobs;
  }

  /** Tells what a claim sent at `sentAt` found: `claimed`, or `idle` once when nothing is left to do. */
  private told(jobs: Job<P>[], sentAt: number): void {
    if (jobs.length > 0) {
      this.idleNow = false;
      this.signals.claimed(jobs, performance.now() - sentAt);
    } else if (!this.idleNow && this.running === 0 && this.pending.length === 0) {
      this.idleNow = true;
      this.signals.idle();
    }
  }

  /** Hands `list` back (aborting each with `reason` when given); resolves to the number released. */
  private releaseAll(list: Held<P>[], reason?: unknown): Promise<number> {
    const mine = list.filter((h) => this.ours(h));
    for (const h of mine) {
      h.acking = true;
      if (reason !== undefined) h.abort.abort(reason);
    }
    for (const h of list) if (!mine.includes(h)) this.drop(h);
    return this.acks.release(mine);
  }

  private async stop(timeoutMs: number): Promise<StopResult> {
    this.stopping = true;
    this.siblings.unsubscribe();
    const asleep = this.unwatch?.();
    this.alarm.ring();
    await this.looping;
    let released = await this.releaseAll(this.pending.splice(0));
    if (this.running > 0) {
      const idle = new Promise<void>((r) => (this.drained = r));
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([idle, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
      clearTimeout(timer);
      const unfinished = [...this.held.values()].filter((h) => h.started && !h.acking);
      released += await this.releaseAll(unfinished, new DOMException('the worker stopped before this job finished; it was released', 'AbortError'));
    }
    await this.acks.settled();
    this.heartbeat.stop();
    clearInterval(this.purger);
    for (const h of this.held.values()) h.lease.stop();
    await asleep; // the doorbell's sleeping connection, back once its sleep (at most 1 s) ends
    await this.queue.close();
    return { released };
  }
}
