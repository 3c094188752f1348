import type { Executor } from '../engine/executor.js';
import { invalid } from '../errors.js';
import { validateName } from '../names.js';
import { show } from '../validate.js';
import { refsArg } from './ack.js';
import { claimJobs } from './claim.js';
import { purgeDeadJobs, purgeFinished, retryDeadJobs } from './dead.js';
import { insertJobs, jobRows } from './enqueue.js';
import { getJobInfo, listArgs, listJobs } from './list.js';
import { claimArgs, jobRow, MAX_DELAY_SECONDS, MAX_LEASE_SECONDS, positiveSeconds, queueSettings } from './options.js';
import { completeJobs, extendJobs, failJob, releaseJobs, type AckContext } from './settle.js';
import { queueStats } from './stats.js';
import type { QueueTables } from './tables.js';
import type { Queue, QueueOptions } from './types.js';
import { startWorker } from './worker.js';
import { intArg, secondsArg } from '../validate.js';

function optionsArg<T extends object>(what: string, value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object') throw invalid(`${what} options must be an object, got ${show(value)}`);
  return value;
}

/** The queue `name` (validated: see `validateName`) over one executor. */
export function createQueue<P>(exec: Executor, t: QueueTables, name: unknown, options?: QueueOptions): Queue<P> {
  const queue = validateName('queue name', name);
  const settings = queueSettings(options);
  const c: AckContext = { exec, t, queue, settings };
  const claimState = { lastPromote: -Infinity };
  const self: Queue<P> = {
    name: queue,
    async enqueue(payload, opts) {
      const [one] = await insertJobs(exec, t, queue, [jobRow(payload, opts, settings, 'job')]);
      return one!;
    },
    enqueueMany: async (items) => insertJobs(exec, t, queue, jobRows(items, settings)),
    claim: async (opts) => claimJobs<P>(exec, t, queue, claimArgs(opts), claimState),
    complete: async (jobs) => completeJobs(c, refsArg(queue, jobs, 'complete')),
    async fail(job, error, opts) {
      if (Array.isArray(job)) throw invalid('fail() takes one job; call it once per job');
      const o = optionsArg('fail()', opts);
      const retryIn = o.retryIn === undefined ? undefined : secondsArg('fail() retryIn', o.retryIn, 0, MAX_DELAY_SECONDS);
      const [ref] = refsArg(queue, job, 'fail');
      return failJob(c, ref!, error, retryIn);
    },
    async release(jobs, opts) {
      const o = optionsArg('release()', opts);
      const delay = secondsArg('release() delay', o.delay ?? 0, 0, MAX_DELAY_SECONDS);
      return releaseJobs(c, refsArg(queue, jobs, 'release'), delay);
    },
    async extend(jobs, seconds) {
      const s = positiveSeconds('extend() seconds', seconds, MAX_LEASE_SECONDS);
      return extendJobs(c, refsArg(queue, jobs, 'extend'), s);
    },
    retryDead: async (opts) => retryDeadJobs(c, optionsArg('retryDead()', opts)),
    purge: async () => purgeFinished(c),
    purgeDead: async (opts) => purgeDeadJobs(c, optionsArg('purgeDead()', opts)),
    list: async (opts) => listJobs<P>(exec, t, queue, listArgs(opts)),
    getJob: async (id) => getJobInfo<P>(exec, t, queue, intArg('getJob() id', id, 1)),
    stats: async () => queueStats(exec, t, queue),
    work: (handler, opts) => startWorker(self, handler, opts, settings.keepFinishedFor > 0),
  };
  return self;
}
