import type { Executor } from '../engine/executor.js';
import { invalid } from '../errors.js';
import { validateName } from '../names.js';
import { UnrecoverableError } from './model/errors.js';
import {
  claimArgs,
  concurrencyKeyArg,
  hasRetention,
  jobRow,
  MAX_DELAY_MS,
  MAX_LEASE_MS,
  positiveMs,
  purgeRetention,
  queueSettings,
  type JobRow,
} from './model/options.js';
import { encodePayload } from './model/payload.js';
import { lockingWithPlainReads } from '../dialect.js';
import { dueWaiting, type QueueTables } from './model/tables.js';
import type { Enqueued, Job, JobRef, QueueOptions } from './model/types.js';
import type { Queue } from './model/queue.js';
import { boolArg, intArg, msArg, optionsOf, show } from '../validate.js';
import {
  refsArg,
  completeAndClaim,
  completeJobs,
  extendJobs,
  failJob,
  releaseJobs,
  type AckContext,
  reportProgress,
  waitForArgs,
  waitForJob,
} from './settle/index.js';
import { claimable, claimJobs, handedJobs, type ClaimArgs, claimCursor } from './claim/index.js';
import { purgeDeadJobs, purgeRetained, retryDeadJobs, getJobInfo, listArgs, listJobs, queueStats, jobIdsArg, promoteJobs, removeJobs } from './admin/index.js';
import { insertJobs, jobRows, callable, batchCallable, coalescedEnqueue, coalescible, producerOf, purgeStaleKeys, purgeStaleKeysNow } from './enqueue/index.js';
import {
  purgeIdleKeys,
  purgeIdleKeysNow,
  pausedSince,
  pauseQueue,
  resumeQueue,
  getLimit,
  limitArgs,
  setLimit,
  getRate,
  rateArg,
  setRate,
} from './admission/index.js';
import { onEnqueue, watchDoorbell, type HandTarget, announce, EarlyRing, ringAhead, ringInCall } from './wake/index.js';
import { handOff } from './handoff/index.js';
import { startWorker, type Handee } from './worker/index.js';

function optionsArg<T extends object>(what: string, value: T | undefined, accepted: readonly (keyof T & string)[]): Partial<T> {
  return optionsOf(what, value, accepted) as Partial<T>;
}

/** The queue `name` (validated: see `validateName`) over one executor. */
export function createQueue<P>(exec: Executor, t: QueueTables, name: unknown, options?: QueueOptions): Queue<P> {
  const queue = validateName('queue name', name);
  const settings = queueSettings(options);
  const c: AckContext = { exec, t, queue, settings };
  const claimState = {
    lastPromote: -Infinity,
    rated: false,
    cursor: claimCursor(exec.state, t.jobs, queue),
    due: dueWaiting(t.jobs, exec.dialect.rangeEndStops),
    gated: (select: string) => lockingWithPlainReads(exec.dialect, select),
    gateApart: exec.dialect.lockingReadsAlone,
  };
  const progress = (job: JobRef, value: unknown): Promise<void> => self.progress(job, value);
  const claimWith = (args: ClaimArgs, via: Executor = exec): Promise<Job<P>[]> => claimJobs<P>(via, t, queue, args, claimState, progress);
  // Idle workers claim at once after a committed enqueue (not inside the application's
  // transaction: its commit is the application's, and pollers see it).
  // A process without workers of the queue begins its ring of other processes' sleepers alongside
  // the enqueue. Jobs that start delayed or blocked become ready later, through a claim's promotion.
  const enqueueRows = async (rows: readonly JobRow[]): Promise<Enqueued[]> => {
    const ready = rows.filter((r) => !r.delayed && r.concKey === null).map((r) => r.priority);
    // A ring begins alongside an enqueue that runs its transaction in the client. One job's CALL
    // rings in the same statement after its commit (and may hand the job to a sleeper); a small
    // batch's CALL is one round trip, lent its connection by the pool unseen, and rings after it.
    const handed = await handOff(exec, t, queue, rows, progress);
    if (handed !== undefined) return handed;
    const ahead =
      ready.length === 0 || batchCallable(exec, t, rows) ? undefined : callable(exec, t, rows) ? ringInCall(exec, t, queue) : ringAhead(exec, t, queue);
    const res = await insertJobs(producerOf(exec), t, queue, rows, ahead instanceof EarlyRing ? { started: () => ahead.begin() } : { ring: ahead }).catch(
      (err: unknown) => {
        ahead?.close();
        throw err;
      },
    );
    announce(exec, t, queue, res.filter((r) => !r.deduplicated).length, Math.min(...ready), ahead);
    return res;
  };
  // A worker as the doorbell's runner of handed jobs: the rows become its jobs.
  const handTarget = (h: Handee<P>): HandTarget => ({
    leaseMicros: h.leaseMicros,
    free: () => h.free(),
    take: (rows, token, sentAt) => h.take(handedJobs<P>(rows, queue, token, h.leaseMicros, sentAt, progress), sentAt),
  });
  const self: Queue<P> = {
    name: queue,
    async enqueue(payload, opts) {
      const row = jobRow(payload, opts, settings, 'enqueue()');
      if (coalescible(exec, t, row)) return coalescedEnqueue(exec, t, queue, enqueueRows, row);
      const [one] = await enqueueRows([row]);
      return one!;
    },
    enqueueMany: async (items) => enqueueRows(jobRows(items, settings)),
    claim: async (opts) => claimWith(claimArgs(opts)),
    async complete(jobs, opts) {
      const o = optionsArg('complete()', opts, ['result']);
      const result = o.result === undefined ? undefined : encodePayload(o.result, 'complete() result');
      const refs = refsArg(queue, jobs, 'complete');
      return completeJobs(c, refs, result === undefined ? undefined : new Map(refs.map((r) => [r.id, result])));
    },
    async progress(job, value) {
      if (Array.isArray(job)) throw invalid('progress() takes one job');
      const [ref] = refsArg(queue, job, 'progress');
      return reportProgress(exec, t, queue, ref!, value);
    },
    async waitFor(id, opts) {
      const jobId = intArg('waitFor() id', id, 1);
      return waitForJob(jobId, () => getJobInfo(exec, t, queue, jobId), waitForArgs(opts));
    },
    async fail(job, error, opts) {
      if (Array.isArray(job)) throw invalid('fail() takes one job; call it once per job');
      const o = optionsArg('fail()', opts, ['retryIn', 'retry']);
      const retryIn = o.retryIn === undefined ? undefined : msArg('fail() retryIn', o.retryIn, 0, MAX_DELAY_MS);
      const retry = boolArg('fail() retry', o.retry ?? !(error instanceof UnrecoverableError));
      if (!retry && retryIn !== undefined) throw invalid(`fail() takes retryIn or retry: false, not both (got retryIn ${show(retryIn)})`);
      const [ref] = refsArg(queue, job, 'fail');
      return failJob(c, ref!, error, retry ? retryIn : 'never');
    },
    async release(jobs, opts) {
      const o = optionsArg('release()', opts, ['delay']);
      const delay = msArg('release() delay', o.delay ?? 0, 0, MAX_DELAY_MS);
      return releaseJobs(c, refsArg(queue, jobs, 'release'), delay);
    },
    async extend(jobs, ms) {
      return extendJobs(c, refsArg(queue, jobs, 'extend'), positiveMs('extend() ms', ms, MAX_LEASE_MS));
    },
    remove: async (ids) => removeJobs(c, jobIdsArg('remove()', ids)),
    promote: async (ids) => promoteJobs(c, jobIdsArg('promote()', ids)),
    retryDead: async (opts) => retryDeadJobs(c, optionsArg('retryDead()', opts, ['ids', 'limit'])),
    purge: async (opts) => purgeRetained(c, purgeRetention(settings, opts)),
    purgeDead: async (opts) => purgeDeadJobs(c, optionsArg('purgeDead()', opts, ['ids'])),
    purgeKeys: async () => (await purgeIdleKeys(exec, t, queue)) + (await purgeStaleKeys(exec, t, queue)),
    list: async (opts) => listJobs<P>(exec, t, queue, listArgs(opts)),
    getJob: async (id) => getJobInfo<P>(exec, t, queue, intArg('getJob() id', id, 1)),
    stats: async () => ({ ...(await queueStats(exec, t, queue)), pausedAt: await pausedSince(exec, t, queue) }),
    pause: async () => pauseQueue(exec, t, queue),
    resume: async () => resumeQueue(exec, t, queue),
    isPaused: async () => (await pausedSince(exec, t, queue)) !== null,
    async setConcurrencyLimit(limit, opts) {
      const a = limitArgs(limit, opts);
      return setLimit(exec, t, queue, a.limit, a.key);
    },
    setRateLimit: async (rate) => setRate(exec, t, queue, rateArg(rate)),
    getRateLimit: async () => getRate(exec, t, queue),
    async getConcurrencyLimit(opts) {
      const o = optionsArg('getConcurrencyLimit()', opts, ['key']);
      return getLimit(exec, t, queue, o.key === undefined ? undefined : concurrencyKeyArg('getConcurrencyLimit() key', o.key));
    },
    work(handler, opts) {
      // A worker's claims and completions keep one pooled connection between them (see `SqlSession`).
      const kept = exec.session();
      const own: AckContext = { ...c, exec: kept.exec };
      // `tr.close()` stops the worker; once stopped (by either), the instance forgets it.
      let forget = (): void => undefined;
      const worker = startWorker<P>(
        {
          claim: async (o, reading) => claimWith({ ...claimArgs(o), reading }, kept.exec),
          complete: (refs, results) => completeJobs(own, refsArg(queue, refs, 'complete'), results),
          completeAndClaim: async (refs, results, o, reading) =>
            completeAndClaim<P>(own, refsArg(queue, refs, 'complete'), results, { ...claimArgs(o), reading }, claimState, progress),
          close: () => {
            forget();
            return kept.end();
          },
          progress,
          fail: (ref, error) => self.fail(ref, error),
          release: (refs) => self.release(refs),
          // Finished and dead jobs past their retention, idle concurrency key rows and stale dedup rows (once a minute per process).
          purge: async () =>
            (hasRetention(settings) ? await self.purge() : 0) + (await purgeIdleKeysNow(exec, t, queue)) + (await purgeStaleKeysNow(exec, t, queue)),
          // The worker's own jobs, bounded by the time left on their leases.
          extend: (refs, ms, boundMs) => extendJobs({ ...c, exec: exec.within(boundMs) }, refs, ms),
          keepsFinished: settings.keepFinishedFor > 0,
          onEnqueue: (bell) => onEnqueue(exec.state, t.jobs, queue, bell, exec.owner, exec.dialect.server),
          watchDoorbell: (handee) => watchDoorbell(exec, t, queue, handee && handTarget(handee)),
          name: queue,
          claimable: (group) => claimable(exec, t, queue, group),
        },
        handler,
        opts,
      );
      forget = exec.state.onStop(async (ms) => worker.stop({ timeout: ms }));
      return worker;
    },
  };
  return self;
}
