import { MAX_CONCURRENCY_KEY_CHARS } from '../../queue/model/options.js';
import { queueTables, type QueueTables } from '../../queue/model/tables.js';
import { schedulesTable } from '../../schedule/schema.js';
import { TABLE_OPTIONS } from '../../tables.js';

/** A queue name, as every Queue table keys it. */
const QUEUE = '`queue` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL';
/** A concurrency key. */
const KEY = `VARCHAR(${MAX_CONCURRENCY_KEY_CHARS}) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`;

/**
 * The jobs of every queue: one row per job, found by claims through the `claim` index, whose
 * ranges are one phase of one queue in run order (see `PHASE` and `ready_priority`).
 */
const jobs = (t: QueueTables): string => `CREATE TABLE IF NOT EXISTS ${t.jobs} (
  \`id\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  ${QUEUE},
  \`grp\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '' COMMENT 'group for filtered claims; empty: none',
  \`phase\` TINYINT UNSIGNED NOT NULL COMMENT '0 ready, 1 delayed, 2 running, 3 done (kept), 4 dead, 5 blocked (its concurrency key is full)',
  \`priority\` SMALLINT NOT NULL DEFAULT 0 COMMENT 'lower runs first',
  \`ready_priority\` SMALLINT NOT NULL DEFAULT 0 COMMENT 'priority while ready, 0 in every other phase',
  \`due_at\` DATETIME(6) NOT NULL COMMENT 'UTC; ready: place in line; delayed: when ready; running: lease expiry; done: purge time; dead: died at',
  \`run_at\` DATETIME(6) NOT NULL COMMENT 'UTC; when the job was scheduled to run; its place in line when it comes back',
  \`attempt\` INT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'claims counted so far',
  \`max_attempts\` INT UNSIGNED NOT NULL,
  \`token\` BIGINT UNSIGNED NOT NULL COMMENT 'fencing token: random per enqueue (finds its rows after a lost reply), new and random per claim',
  \`dedup_k\` VARBINARY(3000) NULL COMMENT 'index form of the dedup key (see keys.ts) while the job is live',
  \`payload\` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'JSON text',
  \`last_error\` TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  \`created_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  \`finished_at\` DATETIME(6) NULL COMMENT 'UTC; kept finished jobs',
  \`result\` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL COMMENT 'JSON text: what the job returned (kept finished jobs)',
  \`progress\` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL COMMENT 'JSON text: the last progress() value',
  \`conc_key\` ${KEY} NULL COMMENT 'concurrency key; null: none',
  PRIMARY KEY (\`id\`),
  KEY \`claim\` (\`queue\`, \`phase\`, \`ready_priority\`, \`due_at\`, \`grp\`)
) ${TABLE_OPTIONS}`;

/** Per-queue state: paused, the fleet's read place. */
const stateDdl = (t: QueueTables): string[] => [
  // One row per queue with fleet-wide state: `paused_at` while the queue is paused (every claim reads it
  // first and takes nothing); `head_read_at`, when a claim of any process last read the ready rows
  // from the head (see `claim/cursor.ts`).
  `CREATE TABLE IF NOT EXISTS ${t.queues} (
  ${QUEUE},
  \`paused_at\` DATETIME(6) NULL COMMENT 'UTC; set while the queue is paused',
  \`head_read_at\` DATETIME(6) NULL COMMENT 'UTC; when a claim last took the turn to read the ready rows from the head',
  PRIMARY KEY (\`queue\`)
) ${TABLE_OPTIONS}`,
  // Where the last claim of a queue that held its claim lock ended its read (`claim/call.ts`).
  `CREATE TABLE IF NOT EXISTS ${t.cursors} (
  ${QUEUE},
  \`priority\` SMALLINT NULL COMMENT 'the last row read by the last claim that held the claim lock; NULL: that read was short (read from the head)',
  \`due_us\` BIGINT NULL COMMENT 'that row''s due time, microseconds since 1970 UTC',
  PRIMARY KEY (\`queue\`)
) ${TABLE_OPTIONS}`,
];

/** Dedup keys: live ones, and those of dead jobs. */
const dedupDdl = (t: QueueTables): string[] => [
  // One row per dedup key, naming the job that took it last; that job holds the key while its own
  // `dedup_k` still equals it (so jobs without a key write no index entry of it). Finishing and dying
  // leave the row; the next taker takes it over, and purges delete rows no job holds (`enqueue/dedup.ts`).
  `CREATE TABLE IF NOT EXISTS ${t.dedup} (
  ${QUEUE},
  \`dedup_k\` VARBINARY(3000) NOT NULL COMMENT 'index form of the dedup key (see keys.ts)',
  \`id\` BIGINT UNSIGNED NOT NULL COMMENT 'the job that took the key; it holds it while its dedup_k equals it',
  \`met\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'takers that found the row already there (written, so two on different cluster nodes conflict)',
  PRIMARY KEY (\`queue\`, \`dedup_k\`)
) ${TABLE_OPTIONS}`,
  // The dedup keys of dead jobs, by job id: a key is cleared when its job dies (a new job may take it)
  // and kept here, so `retryDead()` gives it back while no live job holds it.
  `CREATE TABLE IF NOT EXISTS ${t.deadKeys} (
  \`id\` BIGINT UNSIGNED NOT NULL COMMENT 'the dead job',
  \`dedup_k\` VARBINARY(3000) NOT NULL COMMENT 'its dedup key, in index form, from when it was live',
  PRIMARY KEY (\`id\`)
) ${TABLE_OPTIONS}`,
];

/** Admission: concurrency keys, their jobs, rate slots. */
const admissionDdl = (t: QueueTables): string[] => [
  // One row per concurrency key in use: its limit override, locked (and written) by whoever admits
  // jobs of the key (see `admission/limits.ts`).
  `CREATE TABLE IF NOT EXISTS ${t.keys} (
  ${QUEUE},
  \`conc_key\` ${KEY} NOT NULL COMMENT 'empty: the queue default limit',
  \`max_running\` INT UNSIGNED NULL COMMENT 'most ready and running jobs of the key; null: the queue default',
  \`admissions\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'written by every admission, so two on different cluster nodes conflict',
  PRIMARY KEY (\`queue\`, \`conc_key\`)
) ${TABLE_OPTIONS}`,
  // One row per keyed job admitted (`state` 0: ready or running) or blocked (5), written by the
  // admission that decided it, under the key's lock. The job's own row stays the truth: readers join
  // it by primary key, and a row whose job moved on is deleted by the key's next admission
  // (`admission/key-slots.ts`).
  `CREATE TABLE IF NOT EXISTS ${t.keyed} (
  ${QUEUE},
  \`conc_key\` ${KEY} NOT NULL,
  \`state\` TINYINT UNSIGNED NOT NULL COMMENT '0: admitted (the job was made ready); 5: blocked',
  \`id\` BIGINT UNSIGNED NOT NULL COMMENT 'the job; its row says whether it still holds or waits',
  PRIMARY KEY (\`queue\`, \`conc_key\`, \`state\`, \`id\`)
) ${TABLE_OPTIONS}`,
  // A rate-limited queue's starts: one row per start its window allows. A claim takes free rows
  // (`free_at` passed) with `FOR UPDATE SKIP LOCKED`, one per job it starts, and sets each a window
  // ahead, so no window holds more starts than the queue has rows (`admission/rate.ts`).
  `CREATE TABLE IF NOT EXISTS ${t.rateSlots} (
  ${QUEUE},
  \`slot\` INT UNSIGNED NOT NULL COMMENT '0 to limit - 1',
  \`window_us\` BIGINT UNSIGNED NOT NULL COMMENT 'the window, in microseconds',
  \`free_at\` DATETIME(6) NOT NULL COMMENT 'UTC; when the slot may serve another start',
  PRIMARY KEY (\`queue\`, \`slot\`),
  KEY \`free\` (\`queue\`, \`free_at\`)
) ${TABLE_OPTIONS}`,
];

/** The doorbell. */
const wakeDdl = (t: QueueTables): string[] => [
  // The doorbell (`wake/doorbell.ts`): a guard row per queue counting its rings, and the uncommitted
  // registrations of sleeping connections, with the token a ring may hand a new job to.
  `CREATE TABLE IF NOT EXISTS ${t.sleepers} (
  ${QUEUE},
  \`conn\` BIGINT UNSIGNED NOT NULL COMMENT '0: the guard row of the queue; else CONNECTION_ID() of a sleeping connection (never committed)',
  \`rings\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'guard row: rings of the queue so far (a sleeper that sees it move was rung)',
  \`token\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'registration: the fencing token a ring may lease one job to (0: none)',
  \`lease_us\` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'registration: the lease (microseconds) of a job leased to it',
  PRIMARY KEY (\`queue\`, \`conn\`)
) ${TABLE_OPTIONS}`,
];

/** Recurring schedules. */
const schedulesDdl = (prefix: string): string[] => [
  // Recurring schedules, one row each. `next_at` is the next tick without a job (the `due` index finds
  // due schedules in one range read); a scheduler owns a tick when its compare-and-set on the `rev`
  // it read matches (`schedule/tick.ts`).
  `CREATE TABLE IF NOT EXISTS ${schedulesTable(prefix)} (
  \`name\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  ${QUEUE},
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
];

/** The Queue's tables: jobs, per-queue state, dedup keys, concurrency keys, rate slots, the doorbell, and schedules. */
export const queueDdl = (prefix: string): string[] => {
  const t = queueTables(prefix);
  return [jobs(t), ...stateDdl(t), ...dedupDdl(t), ...admissionDdl(t), ...wakeDdl(t), ...schedulesDdl(prefix)];
};
