import { InstanceState } from '../instance.js';
import type { Dialect } from '../dialect.js';
import type { IsolationLevel, SqlClient, SqlConnection, SqlResult, SqlValue } from '../port.js';
import { DEFAULT_RETRY, NoAnswer, toTaskrowError, withRetry, type Attempt, type RetryOptions } from '../retry.js';

/** Carries a dry run's result out of a transaction that must roll back. */
class DryRunRollback<T> {
  constructor(readonly value: T) {}
}

/** How one unit of work runs. */
export interface RunOptions {
  /** Run the work and roll it back, resolving to what it would have returned (doloop's `test=True`). */
  readonly dryRun?: boolean;
  readonly isolation?: IsolationLevel;
}

/** The default bound on one unit of work (a statement, or a transaction attempt): 30 s. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/**
 * Runs `run` but stops waiting after `ms`: the returned promise then rejects with `NoAnswer` and
 * `controller` is aborted (the adapter destroys the connection). A late answer is dropped.
 */
function bounded<T>(ms: number, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      controller.abort(new NoAnswer(ms / 1000));
      reject(new NoAnswer(ms / 1000));
    }, ms);
    run(controller.signal).then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * `work` over a connection that refuses every new statement once `signal` aborted. Work the engine
 * stopped waiting for MUST NOT go on writing: on a joined client the application rolls back when
 * taskrow rejects, and a statement sent after that ROLLBACK would commit on its own (autocommit);
 * on a single connection it would run inside the retry's transaction. A statement already sent
 * is not recalled (the application's ROLLBACK, or the destroyed connection, undoes it).
 */
function stopsWith<T>(work: (conn: SqlConnection) => Promise<T>, signal: AbortSignal): (conn: SqlConnection) => Promise<T> {
  return (conn) =>
    work({
      query: <Row>(sql: string, params?: readonly SqlValue[]) => (signal.aborted ? Promise.reject(signal.reason) : conn.query<Row>(sql, params)),
    });
}

/**
 * Runs the engine's statements over the adapter's `SqlClient`: every unit of work is retried whole
 * on deadlock, lock wait timeout and lost connection (never on a joined client), no unit of work
 * is waited on longer than `timeoutMs` (it is abandoned and retried as a lost connection), and
 * every driver error leaves as a `TaskrowError`.
 */
export class Executor {
  constructor(
    readonly client: SqlClient,
    readonly dialect: Dialect,
    readonly retry: RetryOptions = DEFAULT_RETRY,
    readonly timeoutMs: number = DEFAULT_STATEMENT_TIMEOUT_MS,
    /**
     * The application's client this executor works for: `client` itself, or the client a
     * session was taken from: in-process wake-ups tell workers of the same client from others.
     */
    readonly owner: SqlClient = client,
    /** The memory of the taskrow instance this executor belongs to (see `InstanceState`). */
    readonly state: InstanceState = new InstanceState(),
  ) {}

  /**
   * The same executor with each unit of work bounded by `ms` (at most its own bound) and at most 3
   * attempts: used where a lease is held, so that a silent connection is given up while the lease
   * still runs. The holder's own deadline, not this bound, decides when it stops trusting a lease.
   */
  within(ms: number): Executor {
    const bound = Math.max(1, Math.min(this.timeoutMs, ms));
    return new Executor(this.client, this.dialect, { ...this.retry, attempts: Math.min(this.retry.attempts, 3) }, bound, this.owner, this.state);
  }

  /** The same executor with one attempt: a failure reaches the caller unretried (as a `TaskrowError`), for a caller that retries its own way. */
  once(): Executor {
    return new Executor(this.client, this.dialect, { ...this.retry, attempts: 1 }, this.timeoutMs, this.owner, this.state);
  }

  /**
   * An executor like this one whose transactions keep one pooled connection between them (see
   * `SqlSession`: no BEGIN or isolation statement after the first), with the `end` that gives the
   * connection back; this executor and a no-op `end` when the client has no sessions. For one
   * caller's stream of short transactions (a worker's claims and completions, a process's
   * enqueues); `idleMs`: see `SessionOptions`.
   */
  session(options: { readonly idleMs?: number } = {}): { readonly exec: Executor; end(): Promise<void> } {
    const kept = this.client.session?.({ timeoutMs: this.timeoutMs, ...options });
    if (!kept) return { exec: this, end: () => Promise.resolve() };
    return { exec: new Executor(kept, this.dialect, this.retry, this.timeoutMs, this.owner, this.state), end: () => kept.end() };
  }

  /**
   * One statement in autocommit (or in the joined transaction), retried as a whole; a statement with
   * no answer within the bound is abandoned (its pooled connection destroyed, see `QueryOptions`).
   */
  query<Row = Record<string, unknown>>(sql: string, params: readonly SqlValue[] = []): Promise<SqlResult<Row>> {
    return withRetry(this.client, this.retry, () => bounded(this.timeoutMs, (signal) => this.client.query<Row>(sql, params, { signal })), this.multiWriter);
  }

  /**
   * Runs `work` in one transaction on one connection, retried as a whole. On a joined client it
   * runs inside the application's transaction; a dry run there uses a savepoint and rolls back to
   * it. MUST roll back a dry run on every path.
   */
  transaction<T>(work: (conn: SqlConnection) => Promise<T>, options: RunOptions = {}): Promise<T> {
    return this.attempts(() => work, options);
  }

  /**
   * Like `transaction`, but each run first asks `plan` what to run: after a run that may have
   * committed without its reply arriving (`Attempt.afterLost`), `plan` MUST look for that run's
   * effect first so a retried write is never applied twice.
   */
  attempts<T>(plan: (attempt: Attempt) => (conn: SqlConnection) => Promise<T>, options: RunOptions = {}): Promise<T> {
    const { client } = this;
    if (client.joined && options.dryRun) return this.savepointDryRun(plan({ number: 1, afterLost: false }));
    const attempt = (a: Attempt): Promise<T> =>
      bounded(this.timeoutMs, async (signal) => {
        const work = stopsWith(plan(a), signal);
        if (!options.dryRun) return client.transaction(work, { isolation: options.isolation, signal });
        try {
          await client.transaction(
            async (conn) => {
              throw new DryRunRollback(await work(conn));
            },
            { isolation: options.isolation, signal },
          );
        } catch (err) {
          if (err instanceof DryRunRollback) return err.value as T;
          throw err;
        }
        throw new Error('unreachable: a dry run always rolls back');
      });
    return withRetry(client, this.retry, attempt, this.multiWriter);
  }

  /** The server is a node of a multi-writer cluster (unknown while connecting: the dialect is being read). */
  private get multiWriter(): boolean {
    return (this.dialect as Dialect | undefined)?.multiWriter === true;
  }

  private async savepointDryRun<T>(work: (conn: SqlConnection) => Promise<T>): Promise<T> {
    const { client } = this;
    try {
      await client.query('SAVEPOINT taskrow_dry_run');
      try {
        return await work(client);
      } finally {
        await client.query('ROLLBACK TO SAVEPOINT taskrow_dry_run');
        await client.query('RELEASE SAVEPOINT taskrow_dry_run');
      }
    } catch (err) {
      throw toTaskrowError(err, client);
    }
  }
}
