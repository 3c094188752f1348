import { ident } from '../names.js';

/** Table names under one prefix; every statement gets its names from here. */
export interface Tables {
  readonly prefix: string;
  readonly migrations: string;
  readonly donesNs: string;
  readonly donesGen: string;
  readonly dones: string;
}

/** Quoted table names for `prefix` (validated by the caller). */
export function tablesFor(prefix: string): Tables {
  return {
    prefix,
    migrations: ident(`${prefix}schema_migrations`),
    donesNs: ident(`${prefix}dones_ns`),
    donesGen: ident(`${prefix}dones_gen`),
    dones: ident(`${prefix}dones`),
  };
}

/** Options every taskrow table is created with: InnoDB (row locks, SKIP LOCKED), utf8mb4, binary collation. */
export const TABLE_OPTIONS = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin';
