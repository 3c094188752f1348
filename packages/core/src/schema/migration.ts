/** One schema version: idempotent statements (safe to run twice, and from two processes at once). */
export interface Migration {
  readonly version: number;
  readonly name: string;
  /** The statements for table prefix `prefix`. */
  statements(prefix: string): string[];
}
