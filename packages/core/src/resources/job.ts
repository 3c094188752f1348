import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { LeaseDeadline } from '../engine/deadline.js';
import type { Executor } from '../engine/executor.js';
import { invalid } from '../errors.js';
import { boolArg, optionsOf } from '../validate.js';
import { ResourceLockLostError, ResourceUnavailableError } from './errors.js';
import { flowEdges, type EdgeThrottle } from './history.js';
import { checkKeys, refreshLocks, releaseLocks, tryAcquire, type Claim } from './locking.js';
import { resKey, resKeys, type ResKey } from './names.js';
import { JOB_OPTIONS, micros, settings, type Settings } from './options.js';
import { noteHeld, noteReleased, type Holding } from './shutdown.js';
import type { ResourcesTables } from './tables.js';
import type { AcquireOptions, ResourceJobOptions, KeyReason, LostReason, ReleaseOptions, ResourceJob, ResourceKey, RunCheck } from './types.js';

/** What every job of one `taskrow.resources()` shares. */
export interface JobContext {
  readonly exec: Executor;
  readonly t: ResourcesTables;
  readonly history: boolean;
  readonly throttle: EdgeThrottle;
  readonly releaseOnExit: boolean;
  readonly owner: string;
  readonly defaults: Settings;
}

/** `lost`: the lease ended on the local clock before a refresh was confirmed; `release()` then marks nothing. */
type State = 'idle' | 'acquiring' | 'held' | 'lost' | 'releasing';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Adds `more` to `list` (repeats dropped) and rejects a key that would be both input and output. */
function merge(list: ResKey[], more: readonly ResKey[], other: readonly ResKey[]): ResKey[] {
  const have = new Set(list.map((k) => k.id));
  const clash = new Set(other.map((k) => k.id));
  const out = [...list];
  for (const k of more) {
    if (clash.has(k.id)) throw invalid(`key ${JSON.stringify(k.key)} is both an input and an output of one job`);
    if (!have.has(k.id)) {
      have.add(k.id);
      out.push(k);
    }
  }
  return out;
}

/** The `ResourceJob` handle: a small state machine idle -> acquiring -> held -> releasing -> idle. */
export class Job implements ResourceJob, Holding {
  readonly name: string;
  private readonly jobKey: ResKey;
  private ins: ResKey[] = [];
  private outs: ResKey[] = [];
  private state: State = 'idle';
  private claim: Claim | undefined;
  /** Settings given to `job()`; each `acquire()` overrides them for that acquisition only. */
  private readonly defaults: Settings;
  /** Settings of the current (or last) acquisition. */
  private current: Settings;
  private controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private turn: Promise<unknown> = Promise.resolve();
  /** The lease on the local monotonic clock, from when the last confirmed acquire or refresh was sent. */
  private lease: LeaseDeadline | undefined;

  constructor(
    private readonly ctx: JobContext,
    name: ResourceKey,
    options: ResourceJobOptions = {},
  ) {
    optionsOf('job()', options, JOB_OPTIONS);
    this.jobKey = resKey(name, 'job name');
    this.name = this.jobKey.key;
    this.defaults = settings(ctx.defaults, options, 'job()', JOB_OPTIONS);
    this.current = this.defaults;
    if (options.inputs !== undefined) this.ins = merge([], resKeys(options.inputs, 'input'), []);
    if (options.outputs !== undefined) this.outs = merge([], resKeys(options.outputs, 'output'), this.ins);
  }

  get inputs(): readonly string[] {
    return this.ins.map((k) => k.key);
  }
  get outputs(): readonly string[] {
    return this.outs.map((k) => k.key);
  }
  get held(): boolean {
    return this.state === 'held';
  }
  get id(): string | undefined {
    return this.state === 'held' || this.state === 'lost' || this.state === 'releasing' ? this.claim?.holder.toString('hex') : undefined;
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  addInputs(...keys: ResourceKey[]): this {
    this.mustBeIdle('addInputs()');
    this.ins = merge(this.ins, resKeys(keys, 'input'), this.outs);
    return this;
  }

  addOutputs(...keys: ResourceKey[]): this {
    this.mustBeIdle('addOutputs()');
    this.outs = merge(this.outs, resKeys(keys, 'output'), this.ins);
    return this;
  }

  async canRun(options?: Pick<AcquireOptions, 'overwrite'>): Promise<RunCheck> {
    this.mustBeIdle('canRun()');
    const s = settings(this.defaults, options, 'canRun()', ['overwrite']);
    const reasons = await checkKeys(this.ctx.exec, this.ctx.t, { inputs: this.ins, outputs: this.outs }, s.overwrite);
    return { ok: reasons.length === 0, reasons };
  }

  async acquire(options?: AcquireOptions): Promise<this> {
    this.mustBeIdle('acquire()');
    const s = settings(this.defaults, options, 'acquire()');
    if (this.ctx.exec.client.joined) {
      throw invalid('acquire() cannot run inside an application transaction (taskrow.in(tx)): locks must outlive transactions');
    }
    this.state = 'acquiring';
    const claim: Claim = { job: this.jobKey, holder: randomBytes(16), owner: this.ctx.owner, inputs: [...this.ins], outputs: [...this.outs] };
    const edges = this.ctx.history ? this.ctx.throttle.due(flowEdges(this.name, this.inputs, this.outputs)) : [];
    const started = performance.now();
    const deadline = started + s.wait;
    let attemptAt = started;
    try {
      for (;;) {
        attemptAt = performance.now();
        const blocked = await tryAcquire(this.ctx.exec, this.ctx.t, claim, micros(s.lease), s.overwrite, edges);
        if (blocked.length === 0) break;
        const now = performance.now();
        if (now >= deadline || blocked.some((r) => r.reason === 'output_exists')) {
          throw new ResourceUnavailableError(this.name, blocked, (now - started) / 1000);
        }
        await sleep(Math.min(deadline - now, 10 + Math.random() * 10));
      }
    } catch (err) {
      this.state = 'idle';
      // A database error may follow a commit whose reply was lost: free whatever got written.
      if (!(err instanceof ResourceUnavailableError)) await releaseLocks(this.ctx.exec, this.ctx.t, claim, false, null).catch(() => undefined);
      throw err;
    }
    this.ctx.throttle.noteWritten(edges);
    this.claim = claim;
    this.current = s;
    this.controller = new AbortController();
    this.lease = new LeaseDeadline(s.lease, attemptAt, () => this.leaseEnded());
    this.state = 'held';
    if (this.ctx.releaseOnExit) noteHeld(this);
    if (s.autoRefresh) this.schedule();
    return this;
  }

  refresh(): Promise<readonly KeyReason<LostReason>[]> {
    if (this.state === 'lost') return Promise.reject(this.signal.reason);
    if (this.state !== 'held') return Promise.reject(invalid(`refresh(): job ${JSON.stringify(this.name)} holds no locks`));
    return this.serial(async () => {
      const claim = this.claim;
      const lease = this.lease;
      if (this.state === 'lost') throw this.signal.reason;
      if (this.state !== 'held' || !claim || !lease) throw invalid(`refresh(): job ${JSON.stringify(this.name)} holds no locks`);
      const before = performance.now();
      // No wait outlives the lease: a silent connection is given up while the lease still runs.
      const exec = this.ctx.exec.within(lease.remaining(before));
      const lost = await refreshLocks(exec, this.ctx.t, claim, micros(this.current.lease), this.current.overwrite);
      if (lost.length > 0) {
        this.loseLocks(new ResourceLockLostError(this.name, lost, 'lost locks'));
        return lost;
      }
      lease.renewed(before);
      return lost;
    });
  }

  release(options?: ReleaseOptions): Promise<void> {
    let failed: boolean;
    try {
      optionsOf('release()', options, ['failed']);
      failed = options?.failed === undefined ? false : boolArg('release() failed', options.failed);
    } catch (err) {
      return Promise.reject(err);
    }
    if ((this.state !== 'held' && this.state !== 'lost') || !this.claim) {
      return Promise.reject(invalid(`release(): job ${JSON.stringify(this.name)} holds no locks (released twice, or never acquired)`));
    }
    const claim = this.claim;
    // A lease that ended on the local clock is not trusted: its locks are freed, its outputs never marked.
    const wasLost = this.state === 'lost';
    this.state = 'releasing';
    this.stopTimer();
    this.lease?.stop();
    return this.serial(async () => {
      const ttl = this.current.outputTtl === null ? null : micros(this.current.outputTtl);
      let released: Awaited<ReturnType<typeof releaseLocks>>;
      try {
        released = await releaseLocks(this.ctx.exec, this.ctx.t, claim, !failed && !wasLost, ttl);
      } catch (err) {
        this.state = wasLost ? 'lost' : 'held'; // nothing was released: the caller may try again
        throw err;
      }
      this.state = 'idle';
      this.claim = undefined;
      noteReleased(this);
      if (!failed && wasLost) throw this.signal.reason as Error;
      if (!failed && released.lost.length > 0) {
        throw new ResourceLockLostError(this.name, released.lost, 'lost locks before it released; its outputs were not marked as existing');
      }
    });
  }

  async run<T>(fn: (job: ResourceJob, signal: AbortSignal) => Promise<T> | T, options?: AcquireOptions): Promise<T> {
    if (typeof fn !== 'function') throw invalid('run() needs a function');
    await this.acquire(options);
    let result: T;
    try {
      result = await fn(this, this.signal);
    } catch (err) {
      if (this.state === 'held' || this.state === 'lost') await this.release({ failed: true }).catch(() => undefined);
      throw err;
    }
    if (this.state === 'held' || this.state === 'lost') await this.release();
    return result;
  }

  /** Shutdown path: release as failed once; on failure give up (the lease frees the keys). */
  async releaseForShutdown(): Promise<void> {
    try {
      if (this.state === 'held' || this.state === 'lost') {
        this.abort(new ResourceLockLostError(this.name, [], 'was released as failed because the process is shutting down'));
        await this.release({ failed: true });
      } else {
        await this.turn.catch(() => undefined);
      }
    } catch {
      this.state = 'idle';
      this.claim = undefined;
    } finally {
      noteReleased(this);
    }
  }

  private mustBeIdle(what: string): void {
    if (this.state !== 'idle') {
      const doing = this.state === 'acquiring' ? 'is acquiring' : 'holds';
      throw invalid(`${what}: job ${JSON.stringify(this.name)} ${doing} its locks; call it before acquire() or after release()`);
    }
  }

  private abort(reason: Error): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /**
   * The lease ended on the local clock before a refresh was confirmed: from now on the job holds
   * nothing it can trust. `held` turns false, `signal` aborts with `LEASE_LOST`, and `release()`
   * frees what is left without marking outputs.
   */
  private leaseEnded(): void {
    this.loseLocks(
      new ResourceLockLostError(
        this.name,
        [],
        'lost its locks: its lease ended (counted from when it was last acquired or refreshed) before a refresh was confirmed',
      ),
    );
  }

  private loseLocks(reason: ResourceLockLostError): void {
    if (this.state !== 'held') return;
    this.state = 'lost';
    this.stopTimer();
    this.lease?.stop();
    this.abort(reason);
  }

  /**
   * Automatic refresh every lease / 3 (at least 0.1 s). Each refresh is bounded by the time left
   * on the lease; a failed one is retried at the next turn, and the lease's local deadline decides
   * when the job stops trusting its locks.
   */
  private schedule(): void {
    const lease = this.current.lease;
    this.timer = setTimeout(
      () => {
        void (async () => {
          if (this.state !== 'held') return;
          await this.refresh().catch(() => undefined);
          if (this.state === 'held') this.schedule();
        })();
      },
      Math.max(100, lease / 3),
    );
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
