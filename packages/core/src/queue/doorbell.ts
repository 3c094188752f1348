import { performance } from 'node:perf_hooks';
import type { Executor } from '../engine/executor.js';
import type { SqlClient, SqlConnection } from '../port.js';
import type { Migration } from '../schema/migration.js';
import { TABLE_OPTIONS } from '../schema/tables.js';
import { NoAnswer } from '../retry.js';
import { toNumber } from '../validate.js';
import { queueTables, type QueueTables } from './tables.js';
import { enqueued } from './wake.js';
import { claimCursor } from './cursor.js';

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
 * a guard row (`conn` = 0): a ring holds it `FOR UPDATE` from before it reads the registrations
 * until after its `KILL`s, and a sleeper takes it in share mode before it rolls its registration back,
 * waiting for any ring in flight (and taking it again when that ring's `KILL` interrupts the wait).
 */

/** Schema version 14: the doorbell's registrations and guard rows. */
export const DOORBELL_MIGRATION: Migration = {
  version: 14,
  name: 'queue-doorbell',
  statements: (prefix) => [
    `CREATE TABLE IF NOT EXISTS ${queueTables(prefix).sleepers} (
  \`queue\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  \`conn\` BIGINT UNSIGNED NOT NULL COMMENT '0: the guard row of the queue; else CONNECTION_ID() of a sleeping connection (never committed)',
  PRIMARY KEY (\`queue\`, \`conn\`)
) ${TABLE_OPTIONS}`,
  ],
};

/** Seconds one sleep lasts; a sleeper registers again after each. */
const SLEEP_SECONDS = 1;
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

const ER_NO_SUCH_THREAD = 1094;
const ER_KILL_DENIED = 1095;
const ER_QUERY_INTERRUPTED = 1317;

const errnoOf = (client: SqlClient, err: unknown): number | undefined => client.describeError(err).errno;

/**
 * One process's sleeping connection for one queue, while any of its doorbell workers runs. A ring
 * wakes this process's workers of the queue as an enqueue here would (`enqueued`): they claim at
 * once, before the sleeper has even given its connection back.
 */
class Sleeper {
  private workers = 0;
  private guarded = false;
  private running = false;

  constructor(
    private readonly exec: Executor,
    private readonly t: QueueTables,
    private readonly queue: string,
  ) {}

  /** One more worker sleeps on this doorbell; returns its unwatch. */
  watch(): () => void {
    this.workers += 1;
    if (!this.running) {
      this.running = true;
      void this.loop();
    }
    let watching = true;
    return () => {
      if (watching) this.workers -= 1;
      watching = false;
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
    this.running = false;
  }

  private readonly wake = (): void => void enqueued(this.t.jobs, this.queue, 1, this.exec.client);

  /** The queue's guard row, written once (an `INSERT IGNORE` that finds it writes nothing). */
  private async guardRow(): Promise<void> {
    if (this.guarded) return;
    await this.exec.query(`INSERT IGNORE INTO ${this.t.sleepers} (\`queue\`, \`conn\`) VALUES (?, 0)`, [this.queue]);
    this.guarded = true;
  }

  /**
   * One sleep, in a transaction that always rolls back: registers, sleeps `SLEEP_SECONDS` (waking
   * the workers at once when a ring interrupts it), takes the guard row.
   */
  private sleep(): Promise<void> {
    const { client } = this.exec;
    const interrupted = (err: unknown): boolean => errnoOf(client, err) === ER_QUERY_INTERRUPTED;
    return this.exec.within((SLEEP_SECONDS + 10) * 1000).transaction(async (conn) => {
      try {
        await conn.query(`INSERT INTO ${this.t.sleepers} (\`queue\`, \`conn\`) VALUES (?, CONNECTION_ID())`, [this.queue]);
      } catch (err) {
        if (!interrupted(err)) throw err; // not registered: a failed statement left nothing behind
        this.wake();
        return this.holdGuard(conn, interrupted); // interrupted: a ring may have seen it
      }
      let failed: unknown;
      try {
        const { rows } = await conn.query<{ rang: unknown }>(`SELECT SLEEP(${SLEEP_SECONDS}) AS rang`);
        if (toNumber(rows[0]?.rang) === 1) this.wake();
      } catch (err) {
        this.wake(); // interrupted by a ring (MariaDB: 1317), or failed: either way, look for jobs
        if (!interrupted(err)) failed = err;
      }
      await this.holdGuard(conn, interrupted);
      if (failed !== undefined) throw failed;
    }, { isolation: 'READ COMMITTED', dryRun: true });
  }

  /**
   * Takes the guard row in share mode, waiting for any ring that read this registration to finish
   * its `KILL`s. MUST NOT return before it holds it, whatever interrupts or fails the wait: only a
   * lost connection (which the pool discards) or the transaction's bound (whose connection the
   * adapter destroys) ends it otherwise.
   */
  private async holdGuard(conn: SqlConnection, interrupted: (err: unknown) => boolean): Promise<void> {
    const sql = `SELECT \`conn\` FROM ${this.t.sleepers} WHERE \`queue\` = ? AND \`conn\` = 0 LOCK IN SHARE MODE`;
    for (;;) {
      try {
        await conn.query(sql, [this.queue]);
        return;
      } catch (err) {
        // Interrupted by a ring's KILL while waiting for that ring (or the wait timed out): wait
        // again. A lost or abandoned connection is never given back to the pool: that ends it.
        const info = this.exec.client.describeError(err);
        if (info.lost || info.closed || err instanceof NoAnswer) throw err;
        if (!interrupted(err)) await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
}

/** `make()`'s value for `client`, jobs table and queue, made once per process. */
function perQueue<T>(registry: WeakMap<SqlClient, Map<string, T>>, client: SqlClient, t: QueueTables, queue: string, make: () => T): T {
  const byQueue = registry.get(client) ?? new Map<string, T>();
  registry.set(client, byQueue);
  const key = `${t.sleepers}\u0000${queue}`;
  let value = byQueue.get(key);
  if (value === undefined) byQueue.set(key, (value = make()));
  return value;
}

const sleepers = new WeakMap<SqlClient, Map<string, Sleeper>>();

/**
 * Keeps this process sleeping on the doorbell of `queue` until the returned unwatch is called:
 * an enqueue into it that commits in another process (on the same server) then wakes this
 * process's workers of the queue within milliseconds. One sleeping connection per client, jobs
 * table and queue serves every worker of the queue in the process. A no-op on a joined client.
 */
export function watchDoorbell(exec: Executor, t: QueueTables, queue: string): () => void {
  if (exec.client.joined) return () => undefined;
  return perQueue(sleepers, exec.client, t, queue, () => new Sleeper(exec, t, queue)).watch();
}

/** What one process knows of the sleepers of one queue. */
interface Rings {
  /** When the last ring ended (`performance.now()`). */
  checkedAt: number;
  /** How long from then no ring is sent: 0 after a ring that found sleepers. */
  trustMs: number;
  /** Jobs not yet rung for. */
  need: number;
  ringing: boolean;
}

const rings = new WeakMap<SqlClient, Map<string, Rings>>();

/**
 * Interrupts up to `jobs` sleepers of `queue` on the server of a connection of `exec`, unawaited.
 * Skipped for a while after a ring that found none: 50 ms after the first such ring, doubling
 * up to a second, or 5 s when the queue has no guard row (no process ever slept on it). So a
 * process that enqueues where no one sleeps sends at most one ring (a read-only transaction) a
 * second per queue, and one per 5 s where nobody uses the doorbell; a server that denies the
 * `KILL` stops its rings for a minute. Never throws: a failed ring only leaves the sleepers to
 * their next poll. Called by `announce` only (never for a joined client).
 */
function ringSleepers(exec: Executor, t: QueueTables, queue: string, jobs: number): void {
  const s = perQueue(rings, exec.client, t, queue, () => ({ checkedAt: -Infinity, trustMs: 0, need: 0, ringing: false }));
  if (performance.now() - s.checkedAt < s.trustMs) return;
  s.need += jobs;
  if (!s.ringing) void ringWhileNeeded(exec, t, queue, s);
}

async function ringWhileNeeded(exec: Executor, t: QueueTables, queue: string, s: Rings): Promise<void> {
  s.ringing = true;
  try {
    while (s.need > 0) {
      const n = Math.min(s.need, MAX_RING);
      s.need = 0;
      const found = await ringOnce(exec, t, queue, n);
      s.trustMs = found > 0 ? 0 : found < 0 ? UNUSED_RECHECK_MS : Math.min(RECHECK_MS, Math.max(RECHECK_MIN_MS, s.trustMs * 2));
      s.checkedAt = performance.now();
    }
  } catch (err) {
    s.need = 0;
    s.checkedAt = performance.now();
    s.trustMs = errnoOf(exec.client, (err as { cause?: unknown }).cause ?? err) === ER_KILL_DENIED ? REFUSED_MS : RECHECK_MS;
  } finally {
    s.ringing = false;
  }
}

/**
 * One ring: holds the queue's guard row `FOR UPDATE`, reads up to `n` registrations (uncommitted:
 * READ UNCOMMITTED) and `KILL QUERY`s each. Resolves to the number of sleepers found, -1 when the
 * queue has no guard row. A sleeper
 * that ended meanwhile (`KILL` finds no such thread) is skipped; a retried ring interrupts a
 * sleeper twice at most, which only wakes it.
 */
function ringOnce(exec: Executor, t: QueueTables, queue: string, n: number): Promise<number> {
  return exec.within(RING_BOUND_MS).transaction(async (conn) => {
    const guard = await conn.query(`SELECT \`conn\` FROM ${t.sleepers} WHERE \`queue\` = ? AND \`conn\` = 0 FOR UPDATE`, [queue]);
    if (guard.rows.length === 0) return -1;
    const { rows } = await conn.query<{ conn: unknown }>(`SELECT \`conn\` FROM ${t.sleepers} WHERE \`queue\` = ? AND \`conn\` > 0 LIMIT ${n}`, [queue]);
    for (const r of rows) {
      const id = BigInt(String(r.conn)); // an integer the server wrote: safe in the text
      try {
        await conn.query(`KILL QUERY ${id}`);
      } catch (err) {
        if (errnoOf(exec.client, err) !== ER_NO_SUCH_THREAD) throw err;
      }
    }
    return rows.length;
  }, { isolation: 'READ UNCOMMITTED' });
}

/**
 * `jobs` jobs of `queue` became ready by a commit of this process: claims of this process read
 * the queue from its head again (see `cursor.ts`), idle workers of this process are rung first,
 * then, for the jobs their claims do not cover, sleepers of other processes. `priority`: the jobs
 * were enqueued ready just now, the least of them with this priority. Not for a joined client:
 * that commit is the application's, and pollers see it.
 */
export function announce(exec: Executor, t: QueueTables, queue: string, jobs: number, priority?: number): void {
  if (exec.client.joined || jobs <= 0) return;
  claimCursor(exec.client, t.jobs, queue).rewind(priority);
  const uncovered = jobs - enqueued(t.jobs, queue, jobs, exec.client);
  if (uncovered > 0) ringSleepers(exec, t, queue, uncovered);
}
