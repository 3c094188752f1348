/** One schema version: idempotent statements (safe to run twice, and from two processes at once). */
export interface Migration {
  readonly version: number;
  readonly name: string;
  /** The statements for table prefix `prefix`: tables and indexes only. */
  statements(prefix: string): string[];
  /**
   * For a change no statement can make idempotent (a column rename): a SELECT that returns a row
   * once the change is in place. `migrate()` skips the statements when it does, and accepts a
   * statement's failure when it does afterwards (another process made the change meanwhile).
   */
  readonly appliedIf?: (prefix: string) => string;
  /**
   * True for a change builds that do not know this version cannot live with (a column they write
   * is gone, a meaning changed): once it is applied, such builds refuse to start (`SCHEMA_TOO_NEW`).
   * A change older builds can ignore (a new table, index or nullable column) leaves it unset.
   */
  readonly breaksOlderBuilds?: true;
}

/** `information_schema` says whether `column` of `prefix` + `name` exists (a migration's `appliedIf`). */
export const columnExists = (prefix: string, name: string, column: string): string =>
  `SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = '${prefix}${name}' AND column_name = '${column}'`;
