import { slot } from '../../instance.js';
import type { Executor } from '../../engine/executor.js';
import type { SqlClient, SqlConnection, SqlValue } from '../../port.js';
import { performance } from 'node:perf_hooks';
import { NoAnswer } from '../../retry.js';
import { placeholderList } from '../../chunk.js';
import { toNumber } from '../../validate.js';
import { claimColumns, newToken, WINDOW_SLACK_US, type ClaimRow } from '../model/claimed.js';
import { PHASE, type QueueTables } from '../model/tables.js';
import { enqueued } from './wake.js';
import { perQueue } from '../model/registry.js';

/**
 * The doorbell: idle workers in other processes pick a new job up in milliseconds. MySQL has no
 * LISTEN / NOTIFY and clusters have no `GET_LOCK`, so a process with `doorbell` workers of a queue
 * keeps one connection in `SELECT SLEEP(1)`, registered by an uncommitted row in `queue_sleepers`; a
 * process whose enqueue committed reads the registrations (READ UNCOMMITTED, so they are never
 * committed, never replicated and never left behind) and interrupts a sleeper with
 * `KILL QUERY <its connection id>`. Uncommitted rows are seen only on the server that holds them,
 * so a ring reaches exactly the sleepers its `KILL` can reach; the others wake at their next poll.
 *
 * A `KILL` MUST NOT reach a connection after its sleeper gave it back to the pool. Each queue has
 * a guard row (`conn` = 0): a ring locks it (writing its count, see below) from before it reads the registrations
 * until after its `KILL`s, and a sleeper takes it in share mode before it rolls its registration back,
 * waiting for any ring in flight (and taking it again when that ring's `KILL` interrupts the wait).
 *
 * A `KILL QUERY` that reaches a connection between two statements is lost (the server clears it
 * before the next one), and a ring that comes while a sleeper is between two sleeps finds no
 * registration. So every ring also counts itself on the guard row (`rings`, written before its
 * read and its `KILL`s), and a sleeper compares: its `SLEEP` runs only while the count (read
 * uncommitted) is the one it last saw, and the guard read after it returns the count again. A ring
 * whose `KILL` was lost, or that found the sleeper between sleeps, moved it: the sleeper wakes its
 * workers at once.
 *
 * A registration may carry a fencing token: a ring then leases the job it rings for to that token
 * (see `wake/hand-call.ts`), and the sleeper, holding the guard row, reads the jobs leased to it and
 * gives them to the worker it registered for, which need not claim them.
 */

/** The guard row's count of rings as the server sent it, or undefined when the queue has no guard row. */
const ringsOf = (rows: readonly { rings: unknown }[]): string | undefined => (rows[0] === undefined ? undefined : String(rows[0].rings));

/** Seconds one sleep lasts; a sleeper registers again after each. */
const SLEEP_SECONDS = 1;

const ER_QUERY_INTERRUPTED = 1317;

/** Resolves after a turn of the event loop: what was set going before it (a claim's statements) is sent first. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The server's error number of `err`, as the adapter of `client` reads it. */
export const errnoOf = (client: SqlClient, err: unknown): number | undefined => client.describeError(err).errno;

/**
 * A worker a ring may hand a job to through this process's sleeper (see `wake/hand-call.ts`): one with
 * no group filter.
 */
export interface HandTarget {
  /** The lease (microseconds) of a job handed to it. */
  readonly leaseMicros: number;
  /** Whether it has a handler slot free now. */
  free(): boolean;
  /**
   * Takes the rows of the jobs a ring leased to `token` for it, as a read sent at `sentAt`
   * (`performance.now()`) found them; runs them, or gives back what it cannot run. MUST NOT throw.
   */
  take(rows: readonly ClaimRow[], token: number, sentAt: number): void;
}

/** A sleep's registration that a ring may hand a job to: its token, its target, when it was sent (`performance.now()`). */
interface Hand {
  readonly token: number;
  readonly target: HandTarget;
  readonly at: number;
}

/** How many rings moved the guard row's count from `before` to `after` (Infinity when either is unknown and they differ). */
const ringsBetween = (before: string | undefined, after: string | undefined): number =>
  before === undefined || after === undefined ? (before === after ? 0 : Infinity) : Number(BigInt(after) - BigInt(before));

/**
 * One process's sleeping connection for one queue, while any of its doorbell workers runs. A ring
 * wakes this process's workers of the queue as an enqueue here would (`enqueued`): they claim at
 * once, before the sleeper has even given its connection back.
 */
class Sleeper {
  private workers = 0;
  /** Workers a ring may hand a job to. */
  private readonly targets = new Set<HandTarget>();
  /** Registrations with a token whose handed jobs this sleeper has not read yet. */
  private unread: Hand[] = [];
  /** The guard row's count of rings as this sleeper last read it (undefined: read it, making the row first). */
  private seen: string | undefined;
  /** The sleep loop, while it runs. */
  private looping: Promise<void> | undefined;

  constructor(
    private readonly exec: Executor,
    private readonly t: QueueTables,
    private readonly queue: string,
  ) {}

  /**
   * One more worker sleeps on this doorbell; returns its unwatch, which resolves once the sleeping
   * connection is back (its transaction rolled back) when it was the last watcher, at once otherwise.
   */
  watch(target?: HandTarget): () => Promise<void> {
    this.workers += 1;
    if (target) this.targets.add(target);
    this.looping ??= this.loop();
    let watching = true;
    return async () => {
      if (watching) this.workers -= 1;
      if (target) this.targets.delete(target);
      watching = false;
      if (this.workers === 0) await this.looping;
    };
  }

  /** Sleeps while any worker watches; a failing doorbell waits a sleep's length (workers still poll). */
  private async loop(): Promise<void> {
    while (this.workers > 0) {
      try {
        await this.guardRow();
        await this.sleep();
      } catch {
        if (this.workers > 0) await new Promise((r) => setTimeout(r, SLEEP_SECONDS * 1000));
      }
    }
    // Cleared in the same turn that saw no watcher: a watch() after it starts a new loop.
    this.looping = undefined;
  }

  private readonly wake = (): void => void enqueued(this.exec.state, this.t.jobs, this.queue, 1, this.exec.owner);

  /**
   * The queue's guard row, written once (an `INSERT IGNORE` that finds it writes nothing), and its
   * count of rings, read before the first registration: a ring after this read moves it.
   */
  private async guardRow(): Promise<void> {
    if (this.seen !== undefined) return;
    await this.exec.query(`INSERT IGNORE INTO ${this.t.sleepers} (\`queue\`, \`conn\`) VALUES (?, 0)`, [this.queue]);
    const { rows } = await this.exec.query<{ rings: unknown }>(`SELECT \`rings\` FROM ${this.t.sleepers} WHERE \`queue\` = ? AND \`conn\` = 0`, [this.queue]);
    this.seen = ringsOf(rows);
    if (this.seen === undefined) throw new Error(`the doorbell's guard row of queue ${this.queue} is gone`); // the loop tries again after a sleep's length
  }

  /**
   * One sleep, in a transaction that always rolls back: registers (with a token a ring may lease a
   * job to, when a worker here has a free slot), sleeps `SLEEP_SECONDS` unless a ring moved the
   * count since the last one (waking the workers at once when a ring interrupts it or moved the
   * count), takes the guard row and reads the count again, and with a token what rings handed it.
   */
  private sleep(): Promise<void> {
    const { client } = this.exec;
    const interrupted = (err: unknown): boolean => errnoOf(client, err) === ER_QUERY_INTERRUPTED;
    return this.exec.within((SLEEP_SECONDS + 10) * 1000).transaction(
      async (conn) => {
        const target = [...this.targets].find((x) => x.free());
        const hand = target ? { token: newToken(), target, at: performance.now() } : undefined;
        if (hand) this.unread.push(hand);
        try {
          await conn.query(`INSERT INTO ${this.t.sleepers} (\`queue\`, \`conn\`, \`token\`, \`lease_us\`) VALUES (?, CONNECTION_ID(), ?, ?)`, [
            this.queue,
            hand?.token ?? 0,
            target?.leaseMicros ?? 0,
          ]);
        } catch (err) {
          // Not registered: a failed statement left nothing behind (a ring that read the row before may have handed it a job: read below, or by the next sleep).
          if (!interrupted(err)) throw err;
          return this.end(conn, interrupted, true); // interrupted: a ring may have seen it
        }
        let failed: unknown;
        let rang = false;
        try {
          // No row: a ring moved the count (read uncommitted: as soon as the ring wrote it) since this
          // sleeper last read it, so its KILL may have come before this statement and been lost.
          const { rows } = await conn.query<{ rang: unknown }>(
            `SELECT SLEEP(${SLEEP_SECONDS}) AS rang FROM ${this.t.sleepers} WHERE \`queue\` = ? AND \`conn\` = 0 AND \`rings\` = ?`,
            [this.queue, this.seen ?? null],
          );
          rang = rows.length === 0 || toNumber(rows[0]!.rang) === 1;
        } catch (err) {
          rang = true; // interrupted by a ring (MariaDB: 1317), or failed: either way, look for jobs
          if (!interrupted(err)) failed = err;
        }
        await this.end(conn, interrupted, rang);
        if (failed !== undefined) throw failed;
      },
      { isolation: 'READ UNCOMMITTED', dryRun: true },
    );
  }

  /**
   * Ends a sleep (`rang`: a ring interrupted it): with registrations whose handed jobs are unread
   * (this one's, or those of sleeps that failed before their read), `settleHanded`; otherwise the
   * workers are woken when rung, then `settle`. Registrations older than their lease are dropped:
   * whatever was handed to them is due again.
   */
  private async end(conn: SqlConnection, interrupted: (err: unknown) => boolean, rang: boolean): Promise<void> {
    this.unread = this.unread.filter((h) => performance.now() - h.at < h.target.leaseMicros / 1000);
    if (this.unread.length > 0) return this.settleHanded(conn, interrupted, rang);
    if (rang) {
      this.wake();
      await turn(); // the woken workers' claims are sent first
    }
    await this.settle(conn, interrupted, rang);
  }

  /**
   * Ends a sleep: holds the guard row (see `holdGuard`) and notes its count; a count that moved
   * during a sleep no ring interrupted (`rang` false) wakes the workers: a ring read the
   * registration after the sleep ended, or interrupted another sleeper. A queue whose guard row is
   * gone gets it again before the next sleep.
   */
  private async settle(conn: SqlConnection, interrupted: (err: unknown) => boolean, rang: boolean): Promise<void> {
    const now = await this.holdGuard(conn, interrupted);
    if (!rang && now !== this.seen) this.wake();
    this.seen = now;
  }

  /**
   * Ends a sleep whose registration carried a token (or that follows sleeps whose read failed):
   * holds the guard row and, in the same statement, reads the jobs rings leased to those tokens
   * (`handedRead`); once it holds the row no ring can hand them more, so the read finds every one.
   * Each registration's target takes its own; the workers wake when more rings came than jobs were
   * handed (a ring that handed nothing, or a ring for a batch).
   */
  private async settleHanded(conn: SqlConnection, interrupted: (err: unknown) => boolean, rang: boolean): Promise<void> {
    const hands = this.unread;
    const { sql, params } = handedRead(this.t, this.queue, hands);
    const { rows, sentAt } = await this.whileGuarded<{ rings: unknown } & ClaimRow>(conn, interrupted, sql, params);
    this.unread = [];
    const now = ringsOf(rows);
    const handed = rows.filter((r) => r.id !== null && r.id !== undefined);
    for (const h of hands) {
      const mine = handed.filter((r) => toNumber(r.token) === h.token);
      if (mine.length > 0) h.target.take(mine, h.token, sentAt);
    }
    if (ringsBetween(this.seen, now) > handed.length || (rang && handed.length === 0)) this.wake();
    this.seen = now;
  }

  /**
   * Takes the guard row in share mode, waiting for any ring that read this registration to finish
   * its `KILL`s, and returns its count of rings (undefined: no guard row); see `whileGuarded`.
   */
  private async holdGuard(conn: SqlConnection, interrupted: (err: unknown) => boolean): Promise<string | undefined> {
    const sql = `SELECT \`rings\` FROM ${this.t.sleepers} WHERE \`queue\` = ? AND \`conn\` = 0 LOCK IN SHARE MODE`;
    return ringsOf((await this.whileGuarded<{ rings: unknown }>(conn, interrupted, sql, [this.queue])).rows);
  }

  /**
   * `sql`, a read that takes the guard row in share mode: its rows, and when the run that
   * answered was sent. MUST NOT return before it holds the row, whatever interrupts or fails the
   * wait: only a lost connection (which the pool discards) or the transaction's bound (whose
   * connection the adapter destroys) ends it otherwise. A ring whose `KILL` interrupts the wait
   * (it read this registration after the sleep ended) wakes the workers, as one that interrupts
   * the sleep does.
   */
  private async whileGuarded<R>(
    conn: SqlConnection,
    interrupted: (err: unknown) => boolean,
    sql: string,
    params: readonly SqlValue[],
  ): Promise<{ rows: R[]; sentAt: number }> {
    for (;;) {
      const sentAt = performance.now();
      try {
        return { rows: (await conn.query<R>(sql, params)).rows, sentAt };
      } catch (err) {
        // Interrupted by a ring's KILL while waiting for that ring (or the wait timed out): wait
        // again. A lost or abandoned connection is never given back to the pool: that ends it.
        const info = this.exec.client.describeError(err);
        if (info.lost || info.closed || err instanceof NoAnswer) throw err;
        if (interrupted(err)) this.wake();
        else await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}

/**
 * The guard row of `queue` in share mode, and with it the jobs rings leased to the tokens of
 * `hands` (each a lease of its target's length that began since its registration was sent, give
 * or take `WINDOW_SLACK_US`): one row per job, each with the guard's `rings`, or one row with the
 * job's columns NULL. The guard row is read first (the join's outer table), so the jobs are read
 * once no ring is in flight; read uncommitted, a locking read still reads each job as committed.
 */
function handedRead(t: QueueTables, queue: string, hands: readonly Hand[]): { sql: string; params: SqlValue[] } {
  const now = performance.now();
  const from = Math.min(...hands.map((h) => h.target.leaseMicros - Math.ceil((now - h.at) * 1000))) - WINDOW_SLACK_US;
  const to = Math.max(...hands.map((h) => h.target.leaseMicros)) + WINDOW_SLACK_US;
  // Not `heldSql`: the job may carry any of the hands' tokens, and is read as a range of the `claim` index.
  const sql = `SELECT g.\`rings\` AS \`rings\`, ${claimColumns('j.')}
    FROM ${t.sleepers} g LEFT JOIN ${t.jobs} j FORCE INDEX (\`claim\`)
      ON j.\`queue\` = g.\`queue\` AND j.\`phase\` = ${PHASE.running} AND j.\`ready_priority\` = 0
        AND j.\`due_at\` BETWEEN UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND AND UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND
        AND j.\`token\` IN (${placeholderList(hands.length)})
    WHERE g.\`queue\` = ? AND g.\`conn\` = 0 LOCK IN SHARE MODE`;
  return { sql, params: [from, to, ...hands.map((h) => h.token), queue] };
}

const SLEEPERS = slot('doorbell sleepers', () => new Map<string, Sleeper>());

/**
 * Keeps this process sleeping on the doorbell of `queue` until the returned unwatch is called:
 * an enqueue into it that commits in another process (on the same server) then wakes this
 * process's workers of the queue within milliseconds, and, with `target` (a worker without a
 * group filter), may hand it the new job (see `wake/hand-call.ts`): `target.take` then runs it, or
 * gives it back. One sleeping connection per client, jobs table and queue serves every worker of
 * the queue in the process; each sleep registers a token for the first target with a free slot
 * (none on a node of a multi-writer cluster, where rings hand nothing). A no-op on a joined client.
 */
export function watchDoorbell(exec: Executor, t: QueueTables, queue: string, target?: HandTarget): () => Promise<void> {
  if (exec.client.joined) return () => Promise.resolve();
  // Rings hand nothing on nodes of multi-writer clusters (see `ringInCall`): no token, the guard read as before.
  return perQueue(exec.state, SLEEPERS, t, queue, () => new Sleeper(exec, t, queue)).watch(exec.dialect.multiWriter ? undefined : target);
}
