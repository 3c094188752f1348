import type { Migration } from '../schema/migration.js';
import { table, TABLE_OPTIONS } from '../schema/tables.js';

/** The schedules table under `prefix` (validated by the caller). */
export const schedulesTable = (prefix: string): string => table(prefix, 'queue_schedules');

/**
 * Schema version 10: recurring schedules of the Queue, one row each. `next_at` is the next tick
 * that has no job yet (UTC; NULL once a pattern has no further tick): the `due` index finds the
 * schedules that are due with one range read. `rev` counts every write of the row; a scheduler
 * owns a tick when its compare-and-set on the `rev` it read matches (see `tick.ts`).
 */
export const SCHEDULES_MIGRATION: Migration = {
  version: 10,
  name: 'queue-schedules',
  statements: (prefix) => [
    `CREATE TABLE IF NOT EXISTS ${schedulesTable(prefix)} (
  \`name\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  \`queue\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  \`cron\` VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL COMMENT 'cron pattern, 5 or 6 fields (seconds first); NULL for an interval',
  \`tz\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL COMMENT 'IANA time zone of the cron pattern',
  \`every_s\` INT UNSIGNED NULL COMMENT 'interval in seconds; NULL for a cron pattern',
  \`anchor_at\` DATETIME(6) NOT NULL COMMENT 'UTC; an interval ticks at anchor_at + k * every_s',
  \`payload\` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'JSON text of each job',
  \`options\` TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'JSON: enqueue options of each job',
  \`missed\` VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'skip, once or each',
  \`missed_max\` SMALLINT UNSIGNED NOT NULL DEFAULT 1 COMMENT 'each: most jobs for one pass over missed ticks',
  \`next_at\` DATETIME(6) NULL COMMENT 'UTC; the next tick without a job; NULL: no further tick',
  \`last_at\` DATETIME(6) NULL COMMENT 'UTC; the latest tick a job was enqueued for',
  \`rev\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT '+1 on every write of the row (compare-and-set)',
  \`created_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  \`updated_at\` DATETIME(6) NOT NULL COMMENT 'UTC; the last upsert',
  PRIMARY KEY (\`name\`),
  KEY \`due\` (\`next_at\`)
) ${TABLE_OPTIONS}`,
  ],
};
