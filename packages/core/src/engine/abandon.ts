import type { DriverErrorInfo, SqlConnection, SqlValue } from '../port.js';
import type { Lender } from './lender.js';

/** What `killingAbandoned` needs of a driver besides its pool. */
export interface SessionKiller<P> {
  /** The server's id of `conn`'s session (the thread id of the driver's handshake); undefined when unknown. */
  threadOf(conn: P): number | undefined;
  /** Statements on one connection of the pool, unwatched: the `KILL` itself goes through it. */
  connectionOf(conn: P): SqlConnection;
  readonly describeError: (err: unknown) => DriverErrorInfo;
}

/** A pool whose connections given up with a statement in flight have their server session killed. */
export interface Abandonable<P, L extends Lender<P>> {
  /** `pool` with a `release` that kills the session of a broken connection whose statement is still in flight. */
  readonly pool: L;
  /** `sql` on `conn` (a connection of the pool, or the driver's object under it), its statements counted while in flight (see `pool`). */
  watch(conn: object, sql: SqlConnection): SqlConnection;
}

/**
 * Destroying a connection does not stop its statement on the server: a lock wait or a `SLEEP`
 * runs on, and the session keeps its transaction's locks, until the server next reads the closed
 * socket (after a lock wait, at `innodb_lock_wait_timeout`; never, on a silent network, before
 * `wait_timeout`). So when a connection is given back broken while one of its statements is still
 * in flight (the engine stopped waiting for it), another connection of the same pool, once the
 * broken one is destroyed, sends `KILL <thread>`: the server ends the statement and rolls the
 * session back at once. The `KILL` runs in the background and its failure (the session already
 * gone, no connection to be had) is dropped: `release` MUST NOT reject, and nothing is left unhandled.
 */
export function killingAbandoned<P extends object, L extends Lender<P>>(pool: L, driver: SessionKiller<P>): Abandonable<P, L> {
  const running = new WeakMap<object, number>();
  const kill = async (thread: number): Promise<void> => {
    let side: P | undefined;
    let broken = false;
    try {
      side = await pool.acquire();
      await driver.connectionOf(side).query(`KILL CONNECTION ${thread}`);
    } catch (err) {
      broken = driver.describeError(err).lost === true;
    } finally {
      if (side !== undefined) await Promise.resolve(pool.release(side, broken)).catch(() => undefined);
    }
  };
  const release = (conn: P, broken: boolean): void | Promise<void> => {
    const thread = broken && (running.get(conn) ?? 0) > 0 ? driver.threadOf(conn) : undefined;
    const released = pool.release(conn, broken);
    if (thread !== undefined && Number.isSafeInteger(thread) && thread > 0) {
      void Promise.resolve(released)
        .catch(() => undefined)
        .then(() => kill(thread));
    }
    return released;
  };
  return {
    pool: { ...pool, release },
    watch: (conn, sql) => ({
      async query<Row>(text: string, params?: readonly SqlValue[]) {
        running.set(conn, (running.get(conn) ?? 0) + 1);
        try {
          return await sql.query<Row>(text, params);
        } finally {
          running.set(conn, (running.get(conn) ?? 1) - 1);
        }
      },
    }),
  };
}
