import { intArg, secondsArg } from '../validate.js';
import { isSettled } from './ack.js';
import { LeaseLostError } from './errors.js';
import { MAX_CLAIM, MAX_LEASE_SECONDS, positiveSeconds } from './options.js';
import type { Job, Queue } from './types.js';
import type { JobHandler, StopResult, QueueWorker, WorkerCounts, WorkerOptions } from './worker-types.js';
import { validateName } from '../names.js';

/** One job the worker holds, from claim until its ack. */
interface Held<P> {
  readonly job: Job<P>;
  readonly controller: AbortController;
  /** Local monotonic estimate of the lease expiry (ms, `performance.now()` scale), kept on the early side. */
  expiresAt: number;
  started: boolean;
  /** Handed to complete / fail / release: no longer extended, no longer ours to abort. */
  acking: boolean;
}

interface Settings {
  concurrency: number;
  batchSize: number;
  lease: number;
  pollMs: number;
  group: string | undefined;
  onError: (error: unknown) => void;
}

/** Seconds between purges of kept finished jobs. */
const PURGE_EVERY_MS = 60_000;

function settings(options: WorkerOptions = {}): Settings {
  const concurrency = intArg('work() concurrency', options.concurrency ?? 1, 1, 1000);
  return {
    concurrency,
    batchSize: intArg('work() batchSize', options.batchSize ?? Math.min(concurrency, MAX_CLAIM), 1, MAX_CLAIM),
    lease: positiveSeconds('work() lease', options.lease ?? 30, MAX_LEASE_SECONDS),
    pollMs: secondsArg('work() pollInterval', options.pollInterval ?? 1, 0.001, 3600) * 1000,
    group: options.group === undefined ? undefined : validateName('group', options.group),
    onError: options.onError ?? ((err) => console.error('taskrow worker:', err)),
  };
}

/**
 * Runs `handler` over jobs of `queue` (see `Queue.work`). Claims in batches when it has a free
 * handler slot and nothing claimed left to start; while the queue is idle it waits 10 ms, 20 ms,
 * ... up to `pollInterval` between claims (every claim is a transaction that commits, so each poll
 * sees new jobs); completes in batches (acks queued while one is written go in the next);
 * extends the leases of every job it holds at half-life, aborting the handler of a job whose
 * lease was lost.
 */
export function startWorker<P>(queue: Queue<P>, handler: JobHandler<P>, options: WorkerOptions | undefined, keepsFinished: boolean): QueueWorker {
  if (typeof handler !== 'function') throw new TypeError('work() needs a handler function');
  const s = settings(options);
  const held = new Map<number, Held<P>>();
  const pending: Held<P>[] = [];
  const toComplete: Held<P>[] = [];
  const acks = new Set<Promise<unknown>>();
  const counts = { completed: 0, failed: 0, lost: 0 };
  let running = 0;
  let stopping = false;
  let flushing: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let drained: (() => void) | undefined;
  let extending = false;

  const nap = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(done, ms) : undefined;
      function done(): void {
        if (timer) clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });
  const poke = (): void => wake?.();
  const track = (p: Promise<unknown>): void => {
    acks.add(p);
    void p.finally(() => acks.delete(p));
  };
  const report = (err: unknown): void => {
    try {
      s.onError(err);
    } catch {
      // an onError that throws must not stop the worker
    }
  };
  const drop = (h: Held<P>): void => void held.delete(h.job.id);
  const ours = (h: Held<P>): boolean => held.get(h.job.id) === h && !h.acking && !isSettled(h.job);

  function flush(): void {
    if (flushing || toComplete.length === 0) return;
    flushing = (async () => {
      await new Promise((r) => setImmediate(r)); // handlers finishing in the same burst join this batch
      while (toComplete.length > 0) {
        const batch = toComplete.splice(0, MAX_CLAIM);
        try {
          await queue.complete(batch.map((h) => h.job));
          counts.completed += batch.length;
        } catch (err) {
          if (err instanceof LeaseLostError) {
            counts.completed += err.applied.length;
            counts.lost += err.lost.length;
          } else report(err); // the jobs come back when their leases expire
        }
        batch.forEach(drop);
      }
    })().finally(() => {
      flushing = undefined;
      flush();
    });
  }

  function finish(h: Held<P>, ok: boolean, error?: unknown): void {
    if (!ours(h)) return void (held.get(h.job.id) === h && drop(h));
    h.acking = true;
    if (ok) {
      toComplete.push(h);
      flush();
      return;
    }
    track(
      queue
        .fail(h.job, error)
        .then(() => void (counts.failed += 1), (err: unknown) => (err instanceof LeaseLostError ? void (counts.lost += 1) : report(err)))
        .finally(() => drop(h)),
    );
  }

  function start(h: Held<P>): void {
    running += 1;
    h.started = true;
    Promise.resolve()
      .then(() => handler(h.job, { signal: h.controller.signal }))
      .then(() => finish(h, true), (err: unknown) => finish(h, false, err))
      .finally(() => {
        running -= 1;
        if (running === 0) drained?.();
        poke();
      });
  }

  /** Lease lost: abort, forget, never ack. */
  function lose(id: number): void {
    const h = held.get(id);
    if (!h || h.acking) return;
    counts.lost += 1;
    drop(h);
    const i = pending.indexOf(h);
    if (i >= 0) pending.splice(i, 1);
    h.controller.abort(new LeaseLostError('extend', [id], []));
  }

  async function heartbeat(): Promise<void> {
    if (extending) return;
    const now = performance.now();
    const due = [...held.values()].filter((h) => !h.acking && h.expiresAt - now < (s.lease * 1000) / 2);
    if (due.length === 0) return;
    extending = true;
    try {
      for (let i = 0; i < due.length; i += MAX_CLAIM) {
        const part = due.slice(i, i + MAX_CLAIM).filter((h) => !h.acking);
        const t0 = performance.now();
        try {
          await queue.extend(part.map((h) => h.job), s.lease);
          for (const h of part) h.expiresAt = t0 + s.lease * 1000;
        } catch (err) {
          if (!(err instanceof LeaseLostError)) throw err;
          err.lost.forEach(lose);
          const kept = new Set(err.applied);
          for (const h of part) if (kept.has(h.job.id)) h.expiresAt = t0 + s.lease * 1000;
        }
      }
    } catch (err) {
      report(err);
    } finally {
      extending = false;
    }
  }

  async function loop(): Promise<void> {
    let idle = 0;
    while (!stopping) {
      while (running < s.concurrency && pending.length > 0) start(pending.shift()!);
      if (pending.length > 0 || running >= s.concurrency) {
        await nap(Infinity);
        continue;
      }
      const t0 = performance.now();
      let jobs: Job<P>[];
      try {
        jobs = await queue.claim({ limit: s.batchSize, lease: s.lease, group: s.group });
      } catch (err) {
        report(err);
        await nap(Math.min(s.pollMs, 10 * 2 ** idle++));
        continue;
      }
      for (const job of jobs) {
        const h: Held<P> = { job, controller: new AbortController(), expiresAt: t0 + s.lease * 1000, started: false, acking: false };
        held.set(job.id, h);
        pending.push(h);
      }
      if (jobs.length > 0) idle = 0;
      else if (!stopping) await nap(Math.min(s.pollMs, 10 * 2 ** Math.min(idle++, 20)));
    }
  }

  async function releaseAll(list: Held<P>[], reason?: unknown): Promise<number> {
    const mine = list.filter(ours);
    for (const h of mine) {
      h.acking = true;
      if (reason !== undefined) h.controller.abort(reason);
    }
    if (mine.length === 0) return 0;
    try {
      await queue.release(mine.map((h) => h.job));
      return mine.length;
    } catch (err) {
      if (err instanceof LeaseLostError) return err.applied.length;
      report(err);
      return 0;
    } finally {
      mine.forEach(drop);
    }
  }

  const beat = setInterval(() => void heartbeat(), Math.max(20, (s.lease * 1000) / 4));
  const purger = keepsFinished ? setInterval(() => void queue.purge().catch(report), PURGE_EVERY_MS) : undefined;
  const looping = loop();
  let stopped: Promise<StopResult> | undefined;

  return {
    get counts(): WorkerCounts {
      return { ...counts };
    },
    stop(options = {}) {
      stopped ??= (async () => {
        const timeoutMs = secondsArg('stop() timeout', options.timeout ?? 30, 0, 24 * 3600) * 1000;
        stopping = true;
        poke();
        await looping;
        let released = await releaseAll(pending.splice(0));
        if (running > 0) {
          const idle = new Promise<void>((r) => (drained = r));
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([idle, new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
          clearTimeout(timer);
          const unfinished = [...held.values()].filter((h) => h.started && !h.acking);
          released += await releaseAll(unfinished, new DOMException('the worker stopped before this job finished; it was released', 'AbortError'));
        }
        while (flushing || acks.size > 0) await Promise.allSettled([flushing, ...acks]);
        clearInterval(beat);
        if (purger) clearInterval(purger);
        return { released };
      })();
      return stopped;
    },
  };
}
