import type { Dialect } from '../dialect.js';
import type { IsolationLevel, SqlClient, SqlConnection, SqlResult, SqlValue } from '../port.js';
import { DEFAULT_RETRY, toTaskrowError, withRetry, type RetryOptions } from '../retry.js';

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

/**
 * Runs the engine's statements over the adapter's `SqlClient`: every unit of work is retried whole
 * on deadlock, lock wait timeout and lost connection (never on a joined client), and every driver
 * error leaves as a `TaskrowError`.
 */
export class Executor {
  constructor(
    readonly client: SqlClient,
    readonly dialect: Dialect,
    readonly retry: RetryOptions = DEFAULT_RETRY,
  ) {}

  /** One statement in autocommit (or in the joined transaction), retried as a whole. */
  query<Row = Record<string, unknown>>(sql: string, params: readonly SqlValue[] = []): Promise<SqlResult<Row>> {
    return withRetry(this.client, this.retry, () => this.client.query<Row>(sql, params));
  }

  /**
   * Runs `work` in one transaction on one connection, retried as a whole. On a joined client it
   * runs inside the application's transaction; a dry run there uses a savepoint and rolls back to
   * it. MUST roll back a dry run on every path.
   */
  transaction<T>(work: (conn: SqlConnection) => Promise<T>, options: RunOptions = {}): Promise<T> {
    const { client } = this;
    if (client.joined && options.dryRun) return this.savepointDryRun(work);
    const attempt = async (): Promise<T> => {
      if (!options.dryRun) return client.transaction(work, { isolation: options.isolation });
      try {
        await client.transaction(async (conn) => {
          throw new DryRunRollback(await work(conn));
        }, { isolation: options.isolation });
      } catch (err) {
        if (err instanceof DryRunRollback) return err.value as T;
        throw err;
      }
      throw new Error('unreachable: a dry run always rolls back');
    };
    return withRetry(client, this.retry, attempt);
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
