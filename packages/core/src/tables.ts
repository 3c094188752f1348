import { ident } from './names.js';

/** Quoted name of taskrow table `name` under `prefix` (both validated by the caller). */
export function table(prefix: string, name: string): string {
  return ident(`${prefix}${name}`);
}

/** Options every taskrow table is created with: InnoDB (row locks, SKIP LOCKED), utf8mb4, binary collation. */
export const TABLE_OPTIONS = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin';
