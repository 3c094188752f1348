import type { RoutineDialect } from '../../dialect.js';
import type { QueueTables } from '../model/tables.js';

/**
 * One of the Queue's stored procedures. It is no schema version: `migrate()` installs it by
 * content (see `installRoutines`), creating it when missing and replacing it when its text changed.
 */
export interface Routine {
  /** The procedure's quoted name under the tables `t`. */
  readonly name: (t: QueueTables) => string;
  /**
   * Its `CREATE PROCEDURE` statement (no `IF NOT EXISTS`) for tables `t` under `prefix`, built for
   * the server family `d` (its differences resolved here, not by a branch inside the routine); its characteristics carry one `COMMENT 'taskrow: ...'`, where the installer writes
   * the hash of the text.
   */
  readonly create: (t: QueueTables, d: RoutineDialect, prefix: string) => string;
}
