import type { Executor } from '../engine/executor.js';
import type { SqlClient, SqlConnection } from '../port.js';
import { columnExists, type Migration } from '../schema/migration.js';
import { TABLE_OPTIONS } from '../schema/tables.js';
import { NoAnswer } from '../retry.js';
import { toNumber } from '../validate.js';
import { queueTables, type QueueTables } from './tables.js';
import { enqueued } from './wake.js';
import { perQueue } from './registry.js';

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

/**
 * Schema version 16: `rings` on the guard rows, the count of rings of the queue so far; a sleeper
 * that sees it move was rung, whether or not the ring's `KILL` reached it.
 */
export const DOORBELL_RINGS_MIGRATION: Migration = {
  version: 16,
  name: 'queue-doorbell-rings',
  statements: (prefix) => [
    `ALTER TABLE ${queueTables(prefix).sleepers} ADD COLUMN \`rings\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'guard row: rings of the queue so far (a sleeper that sees it move was rung)'`,
  ],
  appliedIf: (prefix) => columnExists(prefix, 'queue_sleepers', 'rings'),
};

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
 * One process's sleeping connection for one queue, while any of its doorbell workers runs. A ring
 * wakes this process's workers of the queue as an enqueue here would (`enqueued`): they claim at
 * once, before the sleeper has even given its connection back.
 */
class Sleeper {
  private workers = 0;
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
  watch(): () => Promise<void> {
    this.workers += 1;
    this.looping ??= this.loop();
    let watching = true;
    return async () => {
      if (watching) this.workers -= 1;
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

  private readonly wake = (): void => void enqueued(this.t.jobs, this.queue, 1, this.exec.owner);

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
   * One sleep, in a transaction that always rolls back: registers, sleeps `SLEEP_SECONDS` unless a
   * ring moved the count since the last one (waking the workers at once when a ring interrupts it
   * or moved the count), takes the guard row and reads the count again.
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
        return this.settle(conn, interrupted, true); // interrupted: a ring may have seen it
      }
      let failed: unknown;
      let rang = false;
      try {
        // No row: a ring moved the count (read uncommitted: as soon as the ring wrote it) since this
        // sleeper last read it, so its KILL may have come before this statement and been lost.
        const { rows } = await conn.query<{ rang: unknown }>(`SELECT SLEEP(${SLEEP_SECONDS}) AS rang FROM ${this.t.sleepers} WHERE \`queue\` = ? AND \`conn\` = 0 AND \`rings\` = ?`, [this.queue, this.seen ?? null]);
        rang = rows.length === 0 || toNumber(rows[0]!.rang) === 1;
      } catch (err) {
        rang = true; // interrupted by a ring (MariaDB: 1317), or failed: either way, look for jobs
        if (!interrupted(err)) failed = err;
      }
      if (rang) {
        this.wake();
        await turn(); // the woken workers' claims are sent first
      }
      await this.settle(conn, interrupted, rang);
      if (failed !== undefined) throw failed;
    }, { isolation: 'READ UNCOMMITTED', dryRun: true });
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
   * Takes the guard row in share mode, waiting for any ring that read this registration to finish
   * its `KILL`s, and returns its count of rings (undefined: no guard row). MUST NOT return before
   * it holds it, whatever interrupts or fails the wait: only a lost connection (which the pool
   * discards) or the transaction's bound (whose connection the adapter destroys) ends it otherwise.
   * A ring whose `KILL` interrupts the wait (it read this registration after the sleep ended) wakes
   * the workers, as one that interrupts the sleep does.
   */
  private async holdGuard(conn: SqlConnection, interrupted: (err: unknown) => boolean): Promise<string | undefined> {
    const sql = `SELECT \`rings\` FROM ${this.t.sleepers} WHERE \`queue\` = ? AND \`conn\` = 0 LOCK IN SHARE MODE`;
    for (;;) {
      try {
        return ringsOf((await conn.query<{ rings: unknown }>(sql, [this.queue])).rows);
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

const sleepers = new WeakMap<SqlClient, Map<string, Sleeper>>();

/**
 * Keeps this process sleeping on the doorbell of `queue` until the returned unwatch is called:
 * an enqueue into it that commits in another process (on the same server) then wakes this
 * process's workers of the queue within milliseconds. One sleeping connection per client, jobs
 * table and queue serves every worker of the queue in the process. A no-op on a joined client.
 */
export function watchDoorbell(exec: Executor, t: QueueTables, queue: string): () => Promise<void> {
  if (exec.client.joined) return () => Promise.resolve();
  return perQueue(sleepers, exec.owner, t, queue, () => new Sleeper(exec, t, queue)).watch();
}
