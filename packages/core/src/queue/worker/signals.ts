import { channel, tracingChannel } from 'node:diagnostics_channel';
import type { EventEmitter } from 'node:events';
import type { LeaseLostError } from '../model/errors.js';
import { CHANNELS, type WorkerEventMap, type WorkerLogger } from '../model/events.js';
import type { FailOutcome, Job } from '../model/types.js';

const jobChannel = tracingChannel<unknown, { queue: string; job: Job }>(CHANNELS.job);
const claimChannel = channel(CHANNELS.claim);
const ackChannel = channel(CHANNELS.ack);

/**
 * Where a worker's events go: its `EventEmitter`, the optional logger and the diagnostics
 * channels. MUST NOT throw into the worker: a listener or logger that throws is ignored. Errors go
 * to `onError`, the `error` event and the logger; when none of them is set they go to
 * `console.error`, the one thing a worker prints by itself.
 */
export class WorkerSignals<P> {
  constructor(
    private readonly emitter: EventEmitter<WorkerEventMap<P>>,
    private readonly queue: string,
    private readonly logger: WorkerLogger | undefined,
    private readonly onError: ((error: unknown) => void) | undefined,
  ) {}

  /** `jobs` completions were written in one batch, `ms` after it was sent. */
  acked(jobs: number, ms: number): void {
    if (ackChannel.hasSubscribers) ackChannel.publish({ queue: this.queue, jobs, ms });
  }

  claimed(jobs: readonly Job<P>[], ms: number): void {
    if (claimChannel.hasSubscribers) claimChannel.publish({ queue: this.queue, jobs: jobs.length, ms });
    this.log('debug', { queue: this.queue, jobs: jobs.length, ms }, 'claimed jobs');
    this.emit('claimed', jobs);
  }

  completed(job: Job<P>, result: unknown): void {
    this.log('debug', { queue: this.queue, jobId: job.id, attempt: job.attempt }, 'job completed');
    this.emit('completed', job, result);
  }

  failed(job: Job<P>, error: unknown, outcome: FailOutcome): void {
    const fields = { queue: this.queue, jobId: job.id, attempt: job.attempt, maxAttempts: job.maxAttempts, err: error };
    this.emit('failed', job, error, outcome);
    if (outcome.state === 'dead') {
      this.log('error', fields, 'job failed and is dead');
      this.emit('dead', job, error);
    } else {
      this.log('warn', { ...fields, runAt: outcome.runAt }, 'job failed and will be retried');
      this.emit('retrying', job, error, outcome.runAt);
    }
  }

  leaseLost(job: Job<P>, reason: LeaseLostError): void {
    this.log('warn', { queue: this.queue, jobId: job.id, attempt: job.attempt, err: reason }, 'lease lost');
    this.emit('leaseLost', job, reason);
  }

  idle(): void {
    this.log('debug', { queue: this.queue }, 'idle');
    this.emit('idle');
  }

  error(error: unknown): void {
    const listened = this.emitter.listenerCount('error') > 0;
    if (listened) this.emit('error', error);
    this.log('error', { queue: this.queue, err: error }, 'worker error');
    if (this.onError) {
      try {
        this.onError(error);
      } catch {
        // an onError that throws must not stop the worker
      }
    } else if (!listened && !this.logger?.error) console.error('taskrow worker:', error);
  }

  /** Runs the handler inside the job tracing channel when anyone subscribes to it. */
  trace(job: Job<P>, run: () => Promise<unknown>): Promise<unknown> {
    if (!jobChannel.hasSubscribers) return run();
    return jobChannel.tracePromise(run, { queue: this.queue, job: job as Job });
  }

  private emit<K extends keyof WorkerEventMap<P>>(event: K, ...args: WorkerEventMap<P>[K]): void {
    try {
      (this.emitter.emit as (e: K, ...a: WorkerEventMap<P>[K]) => boolean)(event, ...args);
    } catch {
      // a listener that throws must not stop the worker
    }
  }

  private log(level: keyof WorkerLogger, obj: object, msg: string): void {
    try {
      this.logger?.[level]?.(obj, msg);
    } catch {
      // a logger that throws must not stop the worker
    }
  }
}
