import { donesTables } from '../../dones/tables.js';
import { loopRegistryTable } from '../../loop/tables.js';
import { receiptsTable } from '../../receipts/tables.js';
import { resourcesTables } from '../../resources/tables.js';
import { TABLE_OPTIONS } from '../../tables.js';

/** Dones: namespaces, their generations (`clear()` moves a namespace to a new one) and the done keys of each generation. */
export const donesDdl = (prefix: string): string[] => {
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
  \`k\` VARBINARY(3000) NOT NULL COMMENT 'the key, UTF-8 bytes, exact; over 2999 bytes: a prefix and its SHA-256',
  \`k_long\` VARBINARY(4096) NULL COMMENT 'the whole key when it is over 2999 bytes',
  \`marked_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (\`gen\`, \`k\`)
) ${TABLE_OPTIONS}`,
  ];
};

/** Loop: the registry of task loops and their id types (each loop's own table is created by `createLoop`). */
export const loopDdl = (prefix: string): string[] => [
  `CREATE TABLE IF NOT EXISTS ${loopRegistryTable(prefix)} (
  \`name\` VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  \`id_type\` VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'int, bigint or string(N), N in UTF-8 bytes',
  \`created_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (\`name\`)
) ${TABLE_OPTIONS}`,
];

/** Resources: keys (and whether they exist), their locks, the jobs holding them, and the flow graph's edges. */
export const resourcesDdl = (prefix: string): string[] => {
  const t = resourcesTables(prefix);
  return [
    `CREATE TABLE IF NOT EXISTS ${t.keys} (
  \`h\` BINARY(16) NOT NULL COMMENT 'first 16 bytes of SHA-256 of the key',
  \`k\` VARBINARY(4096) NOT NULL COMMENT 'the key, UTF-8 bytes, exact',
  \`produced_at\` DATETIME(6) NULL COMMENT 'UTC; NULL while the key does not exist',
  \`expires_at\` DATETIME(6) NULL COMMENT 'UTC; the key stops existing at this time; NULL: never',
  \`produced_by\` VARBINARY(4096) NULL COMMENT 'job name that produced the key',
  \`lock_seq\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'bumped by every transaction that locks the row, so clusters certify the lock',
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
  \`job\` VARBINARY(4096) NOT NULL COMMENT 'job name, UTF-8 bytes',
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
  \`src\` VARBINARY(4096) NOT NULL COMMENT 'sanitized name',
  \`dst\` VARBINARY(4096) NOT NULL COMMENT 'sanitized name',
  \`last_seen\` DATETIME(6) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (\`src_h\`, \`dst_h\`, \`kind\`),
  KEY \`dst_h\` (\`dst_h\`),
  KEY \`last_seen\` (\`last_seen\`)
) ${TABLE_OPTIONS}`,
  ];
};

/** Receipts: what a write returned, kept a day, so a retry after a lost reply finds its outcome instead of writing twice. */
export const receiptsDdl = (prefix: string): string[] => [
  `CREATE TABLE IF NOT EXISTS ${receiptsTable(prefix)} (
  \`token\` BINARY(16) NOT NULL,
  \`made_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  \`result\` MEDIUMTEXT CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'what the write returned, encoded by it',
  PRIMARY KEY (\`token\`),
  KEY \`made_at\` (\`made_at\`)
) ${TABLE_OPTIONS}`,
];
