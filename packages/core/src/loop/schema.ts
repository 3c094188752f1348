import { TABLE_OPTIONS } from '../tables.js';
import type { IdCodec } from './ids.js';
import { loopRegistryTable, type LoopTable } from './tables.js';

/**
 * A loop's table, as the original's `create-doloop-table` prints it, with times as BIGINT unix
 * seconds (no 2038 limit). The index serves `get()` in order and keeps `stats()` index-only.
 */
export function loopTableSql(t: LoopTable, codec: IdCodec): string {
  return `CREATE TABLE IF NOT EXISTS ${t.quoted} (
  \`id\` ${codec.columnSql},
  \`last_updated\` BIGINT NULL COMMENT 'unix seconds (UNIX_TIMESTAMP()); NULL: never updated',
  \`lock_until\` BIGINT NULL COMMENT 'unix seconds; NULL: unlocked; now or past: bumped or lock expired',
  PRIMARY KEY (\`id\`),
  KEY \`lock_until\` (\`lock_until\`, \`last_updated\`)
) ${TABLE_OPTIONS}`;
}

/**
 * Records a loop in the registry; keeps the first record when the loop exists (the caller
 * compares). Bound parameters, or `literal` values (already validated) for the printed DDL.
 */
export function registerLoopSql(prefix: string, literal?: { name: string; label: string }): string {
  const values = literal ? `'${literal.name}', '${literal.label}'` : '?, ?';
  return `INSERT INTO ${loopRegistryTable(prefix)} (\`name\`, \`id_type\`, \`created_at\`) VALUES (${values}, UTC_TIMESTAMP(6))
  ON DUPLICATE KEY UPDATE \`name\` = \`name\``;
}
