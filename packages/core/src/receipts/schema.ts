import type { Migration } from '../schema/migration.js';
import { TABLE_OPTIONS } from '../schema/tables.js';
import { receiptsTable } from './tables.js';

/**
 * Schema version 5: receipts of writes whose reply may be lost. A write that must not be applied
 * twice (an enqueue, a Loop `get`) adds one row, keyed by a random token, in its own transaction;
 * a retry after a lost connection reads it back instead of writing again. `made_at` serves the
 * purge of old receipts.
 */
export const RECEIPTS_MIGRATION: Migration = {
  version: 5,
  name: 'receipts',
  statements: (prefix) => [
    `CREATE TABLE IF NOT EXISTS ${receiptsTable(prefix)} (
  \`token\` BINARY(16) NOT NULL,
  \`made_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  \`result\` MEDIUMTEXT CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'what the write returned, encoded by it',
  PRIMARY KEY (\`token\`),
  KEY \`made_at\` (\`made_at\`)
) ${TABLE_OPTIONS}`,
  ],
};
