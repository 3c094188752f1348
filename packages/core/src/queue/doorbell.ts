import type { Executor } from '../engine/executor.js';
import type { SqlClient, SqlConnection } from '../port.js';
import type { Migration } from '../schema/migration.js';
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
  private guarded = false;
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
      let rang = false;
      try {
        const { rows } = await conn.query<{ rang: unknown }>(`SELECT SLEEP(${SLEEP_SECONDS}) AS rang`);
        rang = toNumber(rows[0]?.rang) === 1;
      } catch (err) {
        rang = true; // interrupted by a ring (MariaDB: 1317), or failed: either way, look for jobs
        if (!interrupted(err)) failed = err;
      }
      if (rang) {
        this.wake();
        await turn(); // the woken workers' claims are sent first
      }
      await this.holdGuard(conn, interrupted);
      if (failed !== undefined) throw failed;
    }, { isolation: 'READ COMMITTED', dryRun: true });
  }

  /**
   * Takes the guard row in share mode, waiting for any ring that read this registration to finish
   * its `KILL`s. MUST NOT return before it holds it, whatever interrupts or fails the wait: only a
   * lost connection (which the pool discards) or the transaction's bound (whose connection the
   * adapter destroys) ends it otherwise. A ring whose `KILL` interrupts the wait (it read this
   * registration after the sleep ended) wakes the workers, as one that interrupts the sleep does.
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
