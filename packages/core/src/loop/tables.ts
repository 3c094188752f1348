import { validateTableName } from '../names.js';
import { table } from '../tables.js';

/** The loop registry under one prefix: one row per loop, recording its id type. */
export function loopRegistryTable(prefix: string): string {
  return table(prefix, 'loops');
}

/** A loop's table: unquoted name (`<prefix>loop_<name>`) and quoted identifier. */
export interface LoopTable {
  /** The loop's name (validated). */
  readonly loop: string;
  /** The table's name, unquoted. */
  readonly name: string;
  readonly quoted: string;
}

/** The table of loop `loopName`; MUST reject a name that is not a valid table-name part (`INVALID_NAME`). */
export function loopTable(prefix: string, loopName: unknown): LoopTable {
  const name = validateTableName('loop name', loopName);
  return { loop: name, name: `${prefix}loop_${name}`, quoted: table(prefix, `loop_${name}`) };
}
