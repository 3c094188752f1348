import { invalid } from '../../errors.js';
import { validateName } from '../../names.js';
import { intArg, msArg, optionsOf, show } from '../../validate.js';
import { MAX_CLAIM, MAX_LEASE_MS, positiveMs } from '../model/options.js';
import type { WorkerLogger } from '../model/events.js';
import type { WorkerOptions } from '../model/worker-types.js';

/** A worker's validated settings. */
export interface WorkerSettings {
  readonly concurrency: number;
  readonly batchSize: number;
  /** Lease length in milliseconds. */
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly doorbell: boolean;
  readonly group: string | undefined;
  readonly onError: ((error: unknown) => void) | undefined;
  readonly logger: WorkerLogger | undefined;
}

const WORKER_OPTIONS = ['concurrency', 'batchSize', 'lease', 'pollInterval', 'doorbell', 'group', 'onError', 'logger'] as const;
const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** A pino-compatible logger: an object whose log methods, where present, are functions. */
function loggerArg(value: unknown): WorkerLogger | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object')
    throw invalid(`work() logger must be an object with ${LOG_LEVELS.join(', ')} methods (pino's interface), got ${show(value)}`);
  for (const level of LOG_LEVELS) {
    const m = (value as Record<string, unknown>)[level];
    if (m !== undefined && typeof m !== 'function') throw invalid(`work() logger.${level} must be a function, got ${show(m)}`);
  }
  return value as WorkerLogger;
}

/** Validates `work()`'s handler and options before anything starts. MUST throw a `TaskrowError` naming the value. */
export function workerSettings(handler: unknown, options: WorkerOptions | undefined): WorkerSettings {
  if (typeof handler !== 'function') throw invalid(`work() needs a handler function, got ${show(handler)}`);
  const o = optionsOf('work()', options, WORKER_OPTIONS) as WorkerOptions;
  if (o.onError !== undefined && typeof o.onError !== 'function') throw invalid(`work() onError must be a function, got ${show(o.onError)}`);
  if (o.doorbell !== undefined && typeof o.doorbell !== 'boolean') throw invalid(`work() doorbell must be true or false, got ${show(o.doorbell)}`);
  const concurrency = intArg('work() concurrency', o.concurrency ?? 1, 1, 1000);
  return {
    concurrency,
    batchSize: intArg('work() batchSize', o.batchSize ?? Math.min(concurrency, MAX_CLAIM), 1, MAX_CLAIM),
    leaseMs: positiveMs('work() lease', o.lease ?? 30_000, MAX_LEASE_MS),
    pollMs: msArg('work() pollInterval', o.pollInterval ?? 1000, 1, 3_600_000),
    doorbell: o.doorbell ?? false,
    group: o.group === undefined ? undefined : validateName('group', o.group),
    onError: o.onError,
    logger: loggerArg(o.logger),
  };
}
