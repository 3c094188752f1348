import { INDEX_KEY_BYTES } from '../keys.js';
import type { Migration } from '../schema/migration.js';
import { TABLE_OPTIONS } from '../schema/tables.js';
import { queueTables } from './model/tables.js';

/**
 * Schema version 3: the Queue's one jobs table.
 *
 * One secondary index, `claim`, serves claims, the promotion of due delayed jobs and expired
 * leases, purges and stats. It is led by the queue name and the phase, so a claim never reads
 * finished or dead rows however many are kept; it orders ready rows by priority, then due time,
 * and every other phase by due time alone (`ready_priority` is 0 outside the ready phase). The
 * group is its last column, so a group-filtered claim skips other groups' jobs inside the index.
 * Each extra index would be rewritten by every claim. `dedup` admits one live job per dedup key
 * (the key is cleared when the job finishes or dies, so it is free again).
 */
export const QUEUE_MIGRATION: Migration = {
  version: 3,
  name: 'queue',
  statements: (prefix) => {
    const t = queueTables(prefix);
    return [
      `CREATE TABLE IF NOT EXISTS ${t.jobs} (
  \`id\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  \`queue\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  \`grp\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '' COMMENT 'group for filtered claims; empty: none',
  \`phase\` TINYINT UNSIGNED NOT NULL COMMENT '0 ready, 1 delayed, 2 running, 3 done (kept), 4 dead',
  \`priority\` SMALLINT NOT NULL DEFAULT 0 COMMENT 'lower runs first',
  \`ready_priority\` SMALLINT NOT NULL DEFAULT 0 COMMENT 'priority while ready, 0 in every other phase',
  \`due_at\` DATETIME(6) NOT NULL COMMENT 'UTC; ready: place in line; delayed: when ready; running: lease expiry; done: purge time; dead: died at',
  \`run_at\` DATETIME(6) NOT NULL COMMENT 'UTC; when the job was scheduled to run; its place in line when it comes back',
  \`attempt\` INT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'claims counted so far',
  \`max_attempts\` INT UNSIGNED NOT NULL,
  \`lease\` BIGINT UNSIGNED NOT NULL COMMENT 'fencing token: random at enqueue, +1 on every claim',
  \`dedup_k\` VARBINARY(${INDEX_KEY_BYTES}) NULL COMMENT 'index form of the dedup key (see keys.ts) while the job is live',
  \`payload\` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'JSON text',
  \`last_error\` TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  \`created_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  \`finished_at\` DATETIME(6) NULL COMMENT 'UTC; kept finished jobs',
  PRIMARY KEY (\`id\`),
  KEY \`claim\` (\`queue\`, \`phase\`, \`ready_priority\`, \`due_at\`, \`grp\`),
  UNIQUE KEY \`dedup\` (\`queue\`, \`dedup_k\`)
) ${TABLE_OPTIONS}`,
    ];
  },
};

/**
 * Schema version 7: the fencing token's column is named `token`, as `Job.token` (it was `lease`,
 * while the lease expiry lives in `due_at`). A metadata-only change. Processes of a build that
 * predates it read and write `lease`: stop them before migrating.
 */
export const TOKEN_COLUMN_MIGRATION: Migration = {
  version: 7,
  name: 'queue-token-column',
  statements: (prefix) => [
    `ALTER TABLE ${queueTables(prefix).jobs} CHANGE COLUMN \`lease\` \`token\` BIGINT UNSIGNED NOT NULL COMMENT 'fencing token: random per enqueue (finds its rows after a lost reply), new and random per claim'`,
  ],
  appliedIf: (prefix) =>
    `SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = '${prefix}queue_jobs' AND column_name = 'token'`,
};
