import { MAX_KEY_BYTES } from '../keys.js';
import { columnExists, type Migration } from '../schema/migration.js';
import { TABLE_OPTIONS } from '../schema/tables.js';
import { resourcesTables } from './tables.js';

/**
 * Schema version 13: `lock_seq` on the key rows. Every transaction that locks key rows also adds 1
 * to their `lock_seq`, so it *writes* them: on a cluster with several writable nodes (Galera,
 * multi-primary Group Replication) a `FOR UPDATE` lock exists only on its own node, and only written
 * rows are compared across nodes; written, two acquirers of one key on different nodes conflict at
 * COMMIT and the loser runs again, as it would wait on one server.
 */
export const RESOURCES_LOCK_SEQ_MIGRATION: Migration = {
  version: 13,
  name: 'resources-lock-seq',
  statements: (prefix) => [
    `ALTER TABLE ${resourcesTables(prefix).keys} ADD COLUMN \`lock_seq\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'bumped by every transaction that locks the row, so clusters certify the lock'`,
  ],
  appliedIf: (prefix) => columnExists(prefix, 'resources', 'lock_seq'),
};

/**
 * Schema version 4: the Resources tables. Every key is addressed by the 16-byte digest of its
 * UTF-8 bytes; a job locks the digest rows of all its keys in ascending digest order.
 */
export const RESOURCES_MIGRATION: Migration = {
  version: 4,
  name: 'resources',
  statements: (prefix) => {
    const t = resourcesTables(prefix);
    return [
      `CREATE TABLE IF NOT EXISTS ${t.keys} (
  \`h\` BINARY(16) NOT NULL COMMENT 'first 16 bytes of SHA-256 of the key',
  \`k\` VARBINARY(${MAX_KEY_BYTES}) NOT NULL COMMENT 'the key, UTF-8 bytes, exact',
  \`produced_at\` DATETIME(6) NULL COMMENT 'UTC; NULL while the key does not exist',
  \`expires_at\` DATETIME(6) NULL COMMENT 'UTC; the key stops existing at this time; NULL: never',
  \`produced_by\` VARBINARY(${MAX_KEY_BYTES}) NULL COMMENT 'job name that produced the key',
  PRIMARY KEY (\`h\`)
) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS ${t.locks} (
  \`h\` BINARY(16) NOT NULL COMMENT 'key digest',
  \`holder\` BINARY(16) NOT NULL COMMENT 'one acquisition of one job',
  \`mode\` ENUM('reader', 'writer') NOT NULL,
  \`lease_until\` DATETIME(6) NOT NULL COMMENT 'UTC; the lock is free from this time on',
  PRIMARY KEY (\`h\`, \`holder\`),
  KEY \`holder\` (\`holder\`)
) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS ${t.jobs} (
  \`holder\` BINARY(16) NOT NULL,
  \`job\` VARBINARY(${MAX_KEY_BYTES}) NOT NULL COMMENT 'job name, UTF-8 bytes',
  \`owner\` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'host:pid',
  \`acquired_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  \`lease_until\` DATETIME(6) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (\`holder\`),
  KEY \`lease_until\` (\`lease_until\`)
) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS ${t.edges} (
  \`src_h\` BINARY(16) NOT NULL,
  \`dst_h\` BINARY(16) NOT NULL,
  \`kind\` ENUM('input', 'output') NOT NULL COMMENT 'input: key -> job; output: job -> key',
  \`src\` VARBINARY(${MAX_KEY_BYTES}) NOT NULL COMMENT 'sanitized name',
  \`dst\` VARBINARY(${MAX_KEY_BYTES}) NOT NULL COMMENT 'sanitized name',
  \`last_seen\` DATETIME(6) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (\`src_h\`, \`dst_h\`, \`kind\`),
  KEY \`dst_h\` (\`dst_h\`),
  KEY \`last_seen\` (\`last_seen\`)
) ${TABLE_OPTIONS}`,
    ];
  },
};
