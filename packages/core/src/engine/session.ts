import type { DriverErrorInfo, IsolationLevel, SqlClient, SqlConnection, SqlSession, TransactionOptions } from '../port.js';
import { noteRaisedAtCommit } from '../retry.js';
import type { DriverConnection, DriverPool } from './lender.js';
import { isolationStatement } from './isolation.js';

/**
 * How long a kept connection may sit unused before it goes back to the pool, by default (`idleMs`): longer than an idle
 * worker's default poll (1 s), so an idle worker keeps its connection (given back at once when the
 * pool has a waiter) and each poll is two statements (the read, COMMIT AND CHAIN).
 */
export const SESSION_IDLE_MS = 5000;

/** What a kept session takes from its driver client. */
export interface SessionParts<P extends DriverConnection> {
  readonly pool: DriverPool<P>;
  readonly connectionOf: (conn: P) => SqlConnection;
  readonly describeError: (err: unknown) => DriverErrorInfo;
  /** The client's own transactions: for one asked while the kept connection is busy, or after `end()`. */
  readonly plain: SqlClient;
  /** Subscribes to the pool's "a caller waits for a connection"; returns the unsubscribe. */
  readonly onWait: (listener: () => void) => () => void;
  /** The longest the session waits for the ROLLBACK that ends its chained transaction (then it destroys the connection). */
  readonly timeoutMs: number;
  /** How long the kept connection may sit unused before it goes back (see `SessionOptions.idleMs`). */
  readonly idleMs: number;
}

/** The kept connection, and the transaction chained on it (`open`: begun at `level`, nothing run in it yet). */
interface Kept<P> {
  readonly conn: P;
  readonly sql: SqlConnection;
  level: IsolationLevel;
  open: boolean;
  readonly unwatch: () => void;
}

/**
 * A `SqlSession` over a driver pool (see `port.ts`). Its first transaction takes a connection and
 * begins (isolation statement, BEGIN); each one after commits with `COMMIT AND CHAIN`, which
 * begins the next transaction at the same isolation level in the same round trip, so the next
 * transaction on the kept connection sends neither. A transaction asked without a level runs at
 * READ COMMITTED; one asking another level ends the chained transaction first. The connection
 * goes back to the pool, after a plain COMMIT (or a ROLLBACK of the empty chained transaction)
 * and never inside a transaction: when a caller waits for a connection of the pool (at once when
 * the session is idle, else at the end of its transaction), after its idle time unused (`idleMs`), on
 * `end()`, and on any failure (destroyed when the failure says the connection is lost or the pool
 * calls it unusable, or at once when the engine stops waiting for the transaction).
 */
export function keptSession<P extends DriverConnection>(parts: SessionParts<P>): SqlSession {
  const session = new KeptSession(parts);
  return {
    adapter: parts.plain.adapter,
    joined: false,
    endsInterrupted: parts.plain.endsInterrupted,
    describeError: parts.describeError,
    query: (sql, params, options) => parts.plain.query(sql, params, options),
    transaction: (fn, options) => session.transaction(fn, options),
    end: () => session.end(),
  };
}

class KeptSession<P extends DriverConnection> {
  private kept: Kept<P> | undefined;
  /** A transaction (or the give-back) runs on the kept connection. */
  private busy = false;
  private ended = false;
  /** A caller of the pool waited for a connection since this one was taken. */
  private wanted = false;
  private idle: NodeJS.Timeout | undefined;
  private readonly whenFree: (() => void)[] = [];

  constructor(private readonly parts: SessionParts<P>) {}

  async transaction<T>(fn: (conn: SqlConnection) => Promise<T>, options: TransactionOptions | undefined): Promise<T> {
    if (this.busy || this.ended) return this.parts.plain.transaction(fn, options);
    this.busy = true;
    clearTimeout(this.idle);
    const run = this.run(fn, options);
    // A run the engine stopped waiting for ends here, its connection destroyed: a statement in
    // flight on a destroyed connection may never settle, and MUST NOT keep the session (and
    // `end()`, and the worker's stop) waiting.
    const abandoned = abandonedBy(options?.signal);
    try {
      return await Promise.race([run, abandoned.promise]);
    } finally {
      abandoned.dispose();
      run.catch(() => undefined);
      this.busy = false;
      this.settle();
    }
  }

  async end(): Promise<void> {
    this.ended = true;
    while (this.busy) await new Promise<void>((resolve) => this.whenFree.push(resolve));
    await this.giveBack();
  }

  private async run<T>(fn: (conn: SqlConnection) => Promise<T>, options: TransactionOptions | undefined): Promise<T> {
    const level = options?.isolation ?? 'READ COMMITTED';
    const k = this.kept ?? (await this.take(level, options?.signal));
    const onAbort = (): void => this.drop(k, true);
    options?.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (k.open && k.level !== level) {
        k.open = false;
        await k.conn.commit();
      }
      if (!k.open) {
        await k.sql.query(isolationStatement(level));
        await k.conn.beginTransaction();
        k.level = level;
      }
      k.open = false;
      const result = await fn(k.sql);
      const chain = !this.wanted && !this.ended;
      await (chain ? k.sql.query('COMMIT AND CHAIN') : k.conn.commit()).catch((err: unknown) => {
        noteRaisedAtCommit(err);
        throw err;
      });
      if (chain) k.open = true;
      else this.drop(k, false);
      return result;
    } catch (err) {
      if (this.kept === k) {
        await k.conn.rollback().catch(() => undefined);
        this.drop(k, this.parts.describeError(err).lost === true || this.parts.pool.unusable?.(k.conn) === true);
      }
      throw err;
    } finally {
      options?.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Takes a connection of the pool and watches for callers waiting on the pool while it is kept.
   * The pool tells of each caller once, when it begins to wait: one that began waiting while this
   * session waited for its connection (or the session's own wait) MUST count as wanting it, so a
   * connection taken from a contended pool goes back after its first transaction (under contention
   * the session lends per transaction) and no caller that waited before it was taken is left
   * waiting behind a session that keeps it. A run abandoned while it waited for the pool MUST NOT
   * keep what it got (another run may be on the session by then): that connection goes straight back.
   */
  private async take(level: IsolationLevel, signal: AbortSignal | undefined): Promise<Kept<P>> {
    let contended = false;
    const unwatchAcquire = this.parts.onWait(() => void (contended = true));
    let conn: P;
    try {
      conn = await this.parts.pool.acquire();
    } finally {
      unwatchAcquire();
    }
    if (signal?.aborted) {
      void Promise.resolve(this.parts.pool.release(conn, false)).catch(() => undefined);
      throw signal.reason;
    }
    this.wanted = contended;
    const unwatch = this.parts.onWait(() => {
      this.wanted = true;
      if (!this.busy) void this.giveBack();
    });
    const k: Kept<P> = { conn, sql: this.parts.connectionOf(conn), level, open: false, unwatch };
    this.kept = k;
    return k;
  }

  /** After a transaction: the kept connection goes back when wanted or ended, or after an idle while. */
  private settle(): void {
    for (const resolve of this.whenFree.splice(0)) resolve();
    if (!this.kept) return;
    if (this.wanted || this.ended) void this.giveBack();
    else this.idle = setTimeout(() => void this.giveBack(), this.parts.idleMs).unref();
  }

  /**
   * Ends the chained transaction and gives the connection back: destroyed when the ROLLBACK fails
   * or gets no answer within `timeoutMs`. MUST NOT reject.
   */
  private async giveBack(): Promise<void> {
    const k = this.kept;
    if (!k || this.busy) return;
    this.busy = true;
    clearTimeout(this.idle);
    let broken = false;
    let timer: NodeJS.Timeout | undefined;
    try {
      // A silent connection MUST NOT keep the session busy forever (nor `end()` waiting).
      const silent = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no answer')), this.parts.timeoutMs)));
      if (k.open) await Promise.race([k.conn.rollback(), silent]);
    } catch {
      broken = true;
    } finally {
      clearTimeout(timer);
      this.drop(k, broken);
      this.busy = false;
      for (const resolve of this.whenFree.splice(0)) resolve();
    }
  }

  /** Forgets `k` and gives it back to the pool once (destroyed when `broken`). */
  private drop(k: Kept<P>, broken: boolean): void {
    if (this.kept !== k) return;
    this.kept = undefined;
    k.open = false;
    k.unwatch();
    void Promise.resolve(this.parts.pool.release(k.conn, broken)).catch(() => undefined);
  }
}

/** A promise that rejects with `signal`'s reason once it aborts (never without a signal), and its dispose. */
function abandonedBy(signal: AbortSignal | undefined): { promise: Promise<never>; dispose(): void } {
  if (!signal) return { promise: new Promise<never>(() => undefined), dispose: () => undefined };
  let onAbort: () => void = () => undefined;
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  promise.catch(() => undefined);
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}
