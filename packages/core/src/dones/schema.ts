import { INDEX_KEY_BYTES, MAX_KEY_BYTES, VERBATIM_KEY_BYTES } from '../keys.js';
import type { Migration } from '../schema/migration.js';
import { TABLE_OPTIONS } from '../schema/tables.js';
import { donesTables } from './tables.js';

/** Schema version 1: the Dones tables. */
export const DONES_MIGRATION: Migration = {
  version: 1,
  name: 'dones',
  statements: (prefix) => {
    const t = donesTables(prefix);
    return [
      `CREATE TABLE IF NOT EXISTS ${t.ns} (
  \`name\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  \`gen\` BIGINT UNSIGNED NOT NULL COMMENT 'current generation; clear() moves the namespace to a new one',
  \`created_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (\`name\`),
  UNIQUE KEY \`gen\` (\`gen\`)
) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS ${t.gen} (
  \`gen\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  \`ns\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  \`retired_at\` DATETIME(6) NULL COMMENT 'UTC; set by clear(), the rows of a retired generation are purged in the background',
  PRIMARY KEY (\`gen\`),
  KEY \`retired_at\` (\`retired_at\`)
) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS ${t.dones} (
  \`gen\` BIGINT UNSIGNED NOT NULL,
  \`k\` VARBINARY(${INDEX_KEY_BYTES}) NOT NULL COMMENT 'the key, UTF-8 bytes, exact; over ${VERBATIM_KEY_BYTES} bytes: a prefix and its SHA-256',
  \`k_long\` VARBINARY(${MAX_KEY_BYTES}) NULL COMMENT 'the whole key when it is over ${VERBATIM_KEY_BYTES} bytes',
  \`marked_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (\`gen\`, \`k\`)
) ${TABLE_OPTIONS}`,
    ];
  },
};
