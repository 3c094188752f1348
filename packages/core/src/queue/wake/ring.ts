import { slot } from '../../instance.js';
import { performance } from 'node:perf_hooks';
import type { Executor } from '../../engine/executor.js';
import type { QueueTables } from '../model/tables.js';
import { enqueued, hasWorkers } from './wake.js';
import { claimCursor } from '../model/cursor.js';
import { errnoOf } from './doorbell.js';
import { perQueue } from '../model/registry.js';
import { countRingSql, sleepersSql } from './ring-sql.js';
import type { CallRingAnswer, RingInCall } from './ring-in-call.js';

/**
 * The ringing side of the doorbell (see `doorbell.ts`): a process whose enqueue committed
 * interrupts the sleepers of the queue in other processes with `KILL QUERY`, under the queue's
 * guard row.
 */

/** Milliseconds a ring that found no sleeper of a queue is trusted: 50 ms after the first, doubling to 1 s. */
const RECHECK_MIN_MS = 50;
const RECHECK_MS = 1000;
/** The same for a queue without a guard row: no process ever slept on it. */
const UNUSED_RECHECK_MS = 5000;
/** Milliseconds a ring refused by the server (`KILL` denied) keeps a process from ringing that queue. */
const REFUSED_MS = 60_000;
/** The most sleepers one ring interrupts. */
const MAX_RING = 16;
/** Milliseconds one ring transaction is waited on. */
const RING_BOUND_MS = 5000;
/** Milliseconds an early ring (see `ringAhead`) holds the guard row waiting for its enqueue to end. */
const EARLY_WAIT_MS = 50;
/** Milliseconds without early rings after one found its enqueue waiting for a connection. */
const EARLY_OFF_MS = 10_000;

const ER_NO_SUCH_THREAD = 1094;
const ER_KILL_DENIED = 1095;

/** What one process knows of the sleepers of one queue. */
interface Rings {
  /** When the last ring ended (`performance.now()`). */
  checkedAt: number;
  /** How long from then no ring is sent: 0 after a ring that found sleepers. */
  trustMs: number;
  /** Jobs not yet rung for. */
  need: number;
  ringing: boolean;
  /** No early ring before this (`performance.now()`): one found its enqueue waiting for a connection. */
  earlyOffUntil: number;
}

const RINGS = slot('rings', () => new Map<string, Rings>());

const ringsOf = (exec: Executor, t: QueueTables, queue: string): Rings =>
  perQueue(exec.state, RINGS, t, queue, () => ({ checkedAt: -Infinity, trustMs: 0, need: 0, ringing: false, earlyOffUntil: -Infinity }));

/** What the last ring found still stands: no ring goes for now. */
const trusted = (s: Rings): boolean => performance.now() - s.checkedAt < s.trustMs;

/**
 * Interrupts up to `jobs` sleepers of `queue` on the server of a connection of `exec`, unawaited.
 * Skipped for a while after a ring that found none: 50 ms after the first such ring, doubling
 * up to a second, or 5 s when the queue has no guard row (no process ever slept on it). So a
 * process that enqueues where no one sleeps sends at most one ring (a transaction that writes the queue's guard row) a
 * second per queue, and one per 5 s where nobody uses the doorbell; a server that denies the
 * `KILL` stops its rings for a minute. Never throws: a failed ring only leaves the sleepers to
 * their next poll. Called by `announce` only (never for a joined client).
 */
function ringSleepers(exec: Executor, t: QueueTables, queue: string, jobs: number): void {
  const s = ringsOf(exec, t, queue);
  if (trusted(s)) return;
  s.need += jobs;
  if (!s.ringing) exec.state.background(() => ringWhileNeeded(exec, t, queue, s));
}

/** Notes what a ring found: sleepers (-1: no guard row), or the error number of a ring that failed. */
function noted(s: Rings, found: CallRingAnswer): void {
  s.checkedAt = performance.now();
  if ('errno' in found) {
    s.need = 0;
    s.trustMs = found.errno === ER_KILL_DENIED ? REFUSED_MS : RECHECK_MS;
  } else {
    s.trustMs = found.found > 0 ? 0 : found.found < 0 ? UNUSED_RECHECK_MS : Math.min(RECHECK_MS, Math.max(RECHECK_MIN_MS, s.trustMs * 2));
  }
}

/** Rings (`first`, an early ring's, then one per batch of jobs not yet rung for) until no job is left; notes what each found. */
async function ringWhileNeeded(exec: Executor, t: QueueTables, queue: string, s: Rings, first?: EarlyRing): Promise<void> {
  s.ringing = true;
  try {
    if (first) noted(s, { found: await ringOnce(exec, t, queue, first).finally(() => first.close()) });
    while (s.need > 0) {
      const n = Math.min(s.need, MAX_RING);
      s.need = 0;
      noted(s, { found: await ringOnce(exec, t, queue, n) });
    }
  } catch (err) {
    noted(s, { errno: errnoOf(exec.client, (err as { cause?: unknown }).cause ?? err) });
  } finally {
    s.ringing = false;
  }
}

/**
 * A ring that an enqueue's CALL sends itself, after its commit, in the same statement (the
 * hand-off procedure, see `handoff/hand-call.ts`): while the CALL runs no other ring of the queue
 * goes from this process, and jobs announced meanwhile are rung once it ends. The caller MUST end
 * it: `rang` when the CALL rang (through `enqueueByCall`), else `close()`.
 */
export class CallRing implements RingInCall {
  private open = true;
  private used = false;

  constructor(
    readonly max: number,
    /** Called once, with the ring's answer, or undefined when the CALL did not ring. */
    private readonly after: (answer: CallRingAnswer | undefined) => void,
  ) {}

  rang(answer: CallRingAnswer | undefined): void {
    if (!this.open) return;
    this.used = true;
    this.end(answer ?? { found: 1 });
  }

  /** Ends the ring; the number of jobs it rang for, at most `jobs` (0 when the CALL did not ring). */
  covers(jobs: number): number {
    this.close();
    return this.used ? Math.min(jobs, this.max) : 0;
  }

  /** The CALL did not ring (it went another way, or failed): its jobs are rung the usual way. */
  close(): void {
    if (this.open) this.end(undefined);
  }

  private end(answer: CallRingAnswer | undefined): void {
    this.open = false;
    this.after(answer);
  }
}

/**
 * A ring for an enqueue of one ready job of `queue` by CALL to send in the same statement
 * (see `CallRing`): only in a process with no worker of the queue (no worker here could take the
 * jobs), only when a ring would go now (see `ringSleepers`), and not on a node of a multi-writer
 * cluster (a ring there reaches that node's sleepers only, and a Galera node may let a statement
 * killed in a lock wait complete and go on: docs/compatibility.md, so the enqueue's CALL stays the
 * one verified there and the ring follows it); otherwise undefined. A CALL whose
 * ring's answer the adapter did not pass on counts as one that found sleepers (the next enqueue
 * rings again).
 */
export function ringInCall(exec: Executor, t: QueueTables, queue: string): CallRing | undefined {
  if (exec.client.joined || exec.dialect.multiWriter || hasWorkers(exec.state, t.jobs, queue)) return undefined;
  const s = ringsOf(exec, t, queue);
  if (s.ringing || trusted(s)) return undefined;
  s.ringing = true;
  return new CallRing(1, (answer) => {
    s.ringing = false;
    if (answer !== undefined) noted(s, answer);
    if (s.need > 0) exec.state.background(() => ringWhileNeeded(exec, t, queue, s));
  });
}

/**
 * One ring, bounded by `RING_BOUND_MS`, in a READ UNCOMMITTED transaction: counts itself on the
 * queue's guard row (which locks it until the commit), reads up to `n` registrations (uncommitted)
 * and `KILL QUERY`s each; an early ring reads up to `MAX_RING` and, when it found some, waits for
 * its enqueue to say how many to interrupt. Resolves to the number of sleepers found, -1 when the
 * queue has no guard row. A sleeper that ended meanwhile (`KILL` finds no such thread) is skipped;
 * a retried ring interrupts a sleeper twice at most and counts twice, which only wakes it.
 */
function ringOnce(exec: Executor, t: QueueTables, queue: string, n: number | EarlyRing): Promise<number> {
  return exec.within(RING_BOUND_MS).transaction(
    async (conn) => {
      // Counting the ring locks the guard row, and tells a sleeper this ring's KILL may have missed (see doorbell.ts).
      const guard = await conn.query(countRingSql(t, '?'), [queue]);
      if (guard.affectedRows === 0) return -1;
      const { rows } = await conn.query<{ conn: unknown }>(sleepersSql(t, '?', String(typeof n === 'number' ? n : MAX_RING)), [queue]);
      const wanted = rows.length === 0 || typeof n === 'number' ? rows.length : await n.sleepers();
      for (const r of rows.slice(0, wanted)) {
        const id = BigInt(String(r.conn)); // an integer the server wrote: safe in the text
        try {
          await conn.query(`KILL QUERY ${id}`);
        } catch (err) {
          if (errnoOf(exec.client, err) !== ER_NO_SUCH_THREAD) throw err;
        }
      }
      return rows.length;
    },
    { isolation: 'READ UNCOMMITTED' },
  );
}

/**
 * A ring begun alongside an enqueue (see `ringAhead`): it takes the guard row and reads the
 * registrations while the enqueue runs, and sends its `KILL`s as soon as the enqueue says how many
 * jobs its commit made ready. It waits `EARLY_WAIT_MS` at most, then gives up (no `KILL`), and it
 * waits only for an enqueue whose transaction has begun: one still waiting for a connection may
 * be waiting for the very one this ring holds (a pool of one, or a pool in full use).
 */
export class EarlyRing {
  private open = true;
  private begun = false;
  private settle!: (jobs: number) => void;
  private readonly wanted = new Promise<number>((resolve) => (this.settle = resolve));
  private readonly timer = setTimeout(() => this.close(), EARLY_WAIT_MS);

  constructor(private readonly missed: () => void) {
    this.timer.unref();
  }

  /** The enqueue's transaction has begun (its connection taken). */
  begin(): void {
    this.begun = true;
  }

  /**
   * How many sleepers to interrupt, once the enqueue is over: the jobs it made ready that no
   * worker here covers (0 when it failed). 0 at once when the enqueue has not begun: the ring then
   * ends, gives its connection back, and the jobs are rung the usual way.
   */
  sleepers(): Promise<number> {
    if (!this.begun && this.open) {
      this.missed();
      this.close();
    }
    return this.wanted;
  }

  /**
   * The enqueue is over: interrupt up to `jobs` sleepers (0: none). False when this ring no longer
   * takes them (it gave up waiting, found nothing to ring, or failed): ring them the usual way.
   */
  ring(jobs: number): boolean {
    if (!this.open) return false;
    this.close(jobs);
    return true;
  }

  /** No more jobs are taken: the ring interrupts `jobs` sleepers (none by default) and ends. */
  close(jobs = 0): void {
    if (!this.open) return;
    this.open = false;
    clearTimeout(this.timer);
    this.settle(jobs);
  }
}

/**
 * Starts a ring of `queue`'s sleepers as an enqueue starts, so that only its `KILL`s are left for
 * after the commit (`announce(..., early)`): the ring's transaction, its guard row and its read of
 * the registrations go alongside the enqueue's statements instead of after them. Only in a process
 * with no worker of the queue (a producer: no worker here could take the jobs), only when a ring
 * would go now (see `ringSleepers`), and not for `EARLY_OFF_MS` after a ring found its enqueue
 * still waiting for a connection (see `EarlyRing.sleepers`); otherwise undefined. The caller
 * MUST call `begin()` once the enqueue's transaction has begun, and end it: `announce` with it
 * after the commit, or `close()` when the enqueue failed. The guard row is held `EARLY_WAIT_MS`
 * at most. A sleeper that registers after the read is not rung: it wakes at its workers' next
 * poll, as with any ring that misses a sleeper between two sleeps.
 */
export function ringAhead(exec: Executor, t: QueueTables, queue: string): EarlyRing | undefined {
  if (exec.client.joined || hasWorkers(exec.state, t.jobs, queue)) return undefined;
  const s = ringsOf(exec, t, queue);
  if (s.ringing || trusted(s) || performance.now() < s.earlyOffUntil) return undefined;
  const early = new EarlyRing(() => void (s.earlyOffUntil = performance.now() + EARLY_OFF_MS));
  exec.state.background(() => ringWhileNeeded(exec, t, queue, s, early));
  return early;
}

/**
 * `jobs` jobs of `queue` became ready by a commit of this process: claims of this process read
 * the queue from its head again (see `cursor.ts`), idle workers of this process are rung first,
 * then, for the jobs their claims do not cover, sleepers of other processes (through `early`, the
 * ring begun alongside the enqueue, when it still waits). `priority`: the jobs were enqueued ready
 * just now, the least of them with this priority. On a joined client the commit is the
 * application's: where the adapter sees it (`SqlClient.afterCommit`), this process's workers are
 * rung once it committed; other processes' workers find the jobs at their next poll.
 */
export function announce(exec: Executor, t: QueueTables, queue: string, jobs: number, priority?: number, ahead?: EarlyRing | CallRing): void {
  if (exec.client.joined || jobs <= 0) {
    ahead?.close();
    if (exec.client.joined && jobs > 0) exec.client.afterCommit?.(() => wakeHere(exec, t, queue, jobs, priority));
    return;
  }
  const uncovered = jobs - wakeHere(exec, t, queue, jobs, priority);
  const rung = ahead instanceof CallRing ? ahead.covers(uncovered) : ahead?.ring(uncovered) === true ? uncovered : 0;
  if (uncovered > rung) ringSleepers(exec, t, queue, uncovered - rung);
}

/** Rewinds this process's claims of `queue` and rings its idle workers for `jobs` new jobs (see `enqueued`); resolves how many their claims cover. */
function wakeHere(exec: Executor, t: QueueTables, queue: string, jobs: number, priority?: number): number {
  claimCursor(exec.state, t.jobs, queue).rewind(priority);
  return enqueued(exec.state, t.jobs, queue, jobs, exec.owner);
}
