import { Counter, Histogram, type Registry } from 'prom-client';
import type { Job, JobContext, JobHandler, Queue, QueueWorker, WorkerOptions } from '@taskrow/core';
import { strict } from '../options.js';

/** Per-process worker metrics registered in the application's own registry. */
export interface WorkerMetrics {
  /**
   * Wraps a handler: counts each job it starts (`taskrow_worker_jobs_claimed_total`) and observes
   * its duration in `taskrow_worker_handler_duration_seconds` by outcome (`completed` when it
   * resolves, `failed` when it throws). MUST return the handler's result and rethrow its error unchanged.
   */
  instrument<P>(handler: JobHandler<P>): JobHandler<P>;
  /** Reports a worker's `counts` (completed, failed, lease lost) under its queue name on every scrape, after it stops too. */
  track(worker: QueueWorker, queue: string): QueueWorker;
  /** `queue.work(instrument(handler), options)`, tracked. */
  work<P>(queue: Queue<P>, handler: JobHandler<P>, options?: WorkerOptions): QueueWorker;
}

/** Options of `workerMetrics`. */
export interface WorkerMetricsOptions {
  readonly registry: Registry;
  /** Histogram buckets in seconds; default prom-client's (5 ms to 10 s). */
  readonly buckets?: number[];
}

type CountName = 'completed' | 'failed' | 'lost';

/**
 * Worker metrics for one process: counters of claimed, completed, failed and lease-lost jobs and a
 * handler-duration histogram, labelled by queue, registered in `registry`. Refuses unknown options.
 */
export function workerMetrics(options: WorkerMetricsOptions): WorkerMetrics {
  const o = strict('workerMetrics()', options, ['registry', 'buckets']);
  const registry = o['registry'] as Registry;
  const tracked: { worker: QueueWorker; queue: string }[] = [];
  const fromCounts = (name: string, help: string, field: CountName): Counter<'queue'> =>
    new Counter({
      name,
      help,
      labelNames: ['queue'],
      registers: [registry],
      collect() {
        const sums = new Map<string, number>();
        for (const t of tracked) sums.set(t.queue, (sums.get(t.queue) ?? 0) + t.worker.counts[field]);
        this.reset();
        for (const [queue, n] of sums) this.inc({ queue }, n);
      },
    });
  fromCounts('taskrow_worker_jobs_completed_total', "Jobs completed by this process's workers.", 'completed');
  fromCounts('taskrow_worker_jobs_failed_total', "Jobs failed by this process's workers (retried or dead).", 'failed');
  fromCounts('taskrow_worker_lease_lost_total', "Jobs whose lease this process's workers lost while holding them.", 'lost');
  const claimed = new Counter({
    name: 'taskrow_worker_jobs_claimed_total',
    help: "Jobs this process's instrumented handlers started.",
    labelNames: ['queue'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'taskrow_worker_handler_duration_seconds',
    help: 'Handler run time by outcome.',
    labelNames: ['queue', 'outcome'],
    registers: [registry],
    ...(o['buckets'] === undefined ? {} : { buckets: o['buckets'] as number[] }),
  });
  const api: WorkerMetrics = {
    instrument<P>(handler: JobHandler<P>): JobHandler<P> {
      return async (job: Job<P>, context: JobContext) => {
        claimed.inc({ queue: job.queue });
        const end = duration.startTimer({ queue: job.queue });
        try {
          const result = await handler(job, context);
          end({ outcome: 'completed' });
          return result;
        } catch (err) {
          end({ outcome: 'failed' });
          throw err;
        }
      };
    },
    track(worker, queue) {
      tracked.push({ worker, queue });
      return worker;
    },
    work(queue, handler, workOptions) {
      return api.track(queue.work(api.instrument(handler), workOptions), queue.name);
    },
  };
  return api;
}
