/** What a raw driver's connection and pool offer the engine (see `driverClient`, `keptSession`). */

/**
 * The transaction calls of a raw driver connection (a mysql2 or `mariadb` promise Connection or
 * PoolConnection). Statements, the isolation statement included, go through the adapter's
 * `SqlConnection` over it (see `DriverClientSpec.connectionOf`).
 */
export interface DriverConnection {
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** How a driver's pool lends the connection of one of taskrow's transactions. */
export interface Lender<P> {
  /** Borrows one connection for one transaction (or one autocommit statement). */
  acquire(): Promise<P>;
  /**
   * Gives `conn` back once its transaction ended, on every path. When `broken` is true the
   * connection MUST NOT go back into the pool as usable (destroy it). MUST NOT reject: a rejection
   * would replace the transaction's own outcome.
   */
  release(conn: P, broken: boolean): void | Promise<void>;
  /**
   * Asked after a failed transaction, besides `describeError(err).lost`: true when the driver says
   * `conn` can no longer be used (for example `mariadb`'s `!conn.isValid()`).
   */
  unusable?(conn: P): boolean;
}

/** A driver's pool, as `driverClient` lends its connections (see `Lender`). */
export interface DriverPool<P extends DriverConnection> extends Lender<P> {
  /**
   * Subscribes `listener` to the pool's "a caller now waits for a connection" (mysql2's and
   * `mariadb`'s `enqueue` event) and returns the unsubscribe. A pool that leaves it out gets no
   * `SqlClient.session`: taskrow then never keeps one of its connections between transactions.
   */
  onWait?(listener: () => void): () => void;
}
