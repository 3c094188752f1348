import { DONES_MIGRATION } from '../dones/schema.js';
import { LOOP_MIGRATION } from '../loop/schema.js';
import { QUEUE_MIGRATION, TOKEN_COLUMN_MIGRATION } from '../queue/schema.js';
import { RESOURCES_LOCK_SEQ_MIGRATION, RESOURCES_MIGRATION } from '../resources/schema.js';
import { RECEIPTS_MIGRATION } from '../receipts/schema.js';
import { DEAD_KEYS_MIGRATION } from '../queue/settle/dead-keys.js';
import { QUEUE_HEAD_MIGRATION, QUEUES_MIGRATION } from '../queue/admission/pause.js';
import { RESULTS_MIGRATION } from '../queue/settle/results.js';
import { SCHEDULES_MIGRATION } from '../schedule/schema.js';
import { LIMITS_MIGRATION } from '../queue/admission/limits.js';
import { RATE_MIGRATION } from '../queue/admission/rate.js';
import { DOORBELL_MIGRATION, DOORBELL_RINGS_MIGRATION } from '../queue/wake/doorbell.js';
import { ENQUEUE_CALL_MIGRATION } from '../queue/enqueue/call.js';
import { RING_CALL_MIGRATION } from '../queue/wake/ring-call.js';
import { ENQUEUE_MANY_CALL_CONSECUTIVE_MIGRATION, ENQUEUE_MANY_CALL_MIGRATION, ENQUEUE_MANY_CALL_ORDINAL_MIGRATION } from '../queue/enqueue/many-call.js';
import {
  CLAIM_CALL_FEW_MIGRATION, CLAIM_CALL_FLEET_MIGRATION, CLAIM_CALL_GATE_MIGRATION, CLAIM_CALL_MIGRATION, CLAIM_CALL_READ_BACK_MIGRATION, QUEUE_CURSORS_MIGRATION,
} from '../queue/claim/call.js';
import { ENQUEUE_RING_CALL_MIGRATION } from '../queue/enqueue/ring-call.js';
import { DOORBELL_HAND_MIGRATION, HAND_CALL_MIGRATION } from '../queue/wake/hand-call.js';
import { DEDUP_TABLE_MIGRATION } from '../queue/enqueue/dedup.js';
import { KEYED_TABLE_MIGRATION } from '../queue/admission/key-slots.js';
import { COMPLETE_CLAIM_CALL_MIGRATION } from '../queue/settle/complete-claim-call.js';
import { COMPLETE_CALL_MIGRATION } from '../queue/settle/complete-call.js';
import { ENQUEUE_LEASED_MIGRATION, ENQUEUE_UNLOCKED_IDS_MIGRATION } from '../queue/wake/local-hand.js';
import type { Migration } from './migration.js';
import { table, TABLE_OPTIONS } from './tables.js';

export type { Migration } from './migration.js';

/** The record of applied versions; created before anything else. */
export function migrationsTableSql(prefix: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table(prefix, 'schema_migrations')} (
  \`version\` INT UNSIGNED NOT NULL,
  \`name\` VARCHAR(128) NOT NULL,
  \`applied_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (\`version\`)
) ${TABLE_OPTIONS}`;
}

/**
 * Every version, in order. New versions are appended, never edited. Versions are allocated per
 * primitive: 1 Dones, 2 Loop, 3 Queue, 4 Resources; later changes take the next free number
 * (5 receipts of writes retried after a lost reply, 6 dedup keys of dead jobs, 7 the Queue's
 * fencing token column renamed `token`, 8 per-queue state: paused, 9 job results and progress, 10 the Queue's recurring schedules,
 * 11 per-key concurrency limits, 12 rate limits, 13 Resources' `lock_seq`, written by every lock so clusters certify it, 14 the Queue's doorbell,
 * 15 the queue rows' `head_read_at`: claims of the fleet take turns to read a queue from its head, 16 the doorbell guard rows'
 * `rings`: a sleeper sees a ring whose `KILL` missed it, 17 the procedure that enqueues one job in one statement, 18 the
 * procedure that rings a queue's sleepers in one statement, 19 the procedure that enqueues a batch of jobs in one statement, 20 the procedure that claims
 * ready jobs in one statement, 21 the procedures that enqueue and ring in one statement, 22 the claim procedure again, 23 the doorbell
 * registrations' token and lease, 24 the procedures that ring and hand a new job to a sleeper, 25 the fleet's read place of each queue, 26 the claim procedure that
 * reads from and keeps it, 27 dedup keys in their own table instead of a unique index of the jobs table, 28 the claim procedure
 * whose gate is one server's statement, 29 the claim procedure that reads its leased jobs back through a join, 30 the batch
 * enqueue procedure that counts consecutive ids instead of reading them back, 31 the jobs of concurrency keys in their own table instead of
 * an index of the jobs table, 32 the procedure that completes a worker's batch and claims the next in one statement, 33 the procedure that
 * completes a batch in one statement, 34 the batch enqueue procedure whose rows' tokens tell their place, so one
 * read by primary key shows their ids consecutive, 35 the batch enqueue procedure that leases its jobs to an idle worker of the
 * enqueuing process, 36 both batch enqueue procedures again, their ids' check a read that locks nothing).
 */
export const MIGRATIONS: readonly Migration[] = [
  DONES_MIGRATION, LOOP_MIGRATION, QUEUE_MIGRATION, RESOURCES_MIGRATION, RECEIPTS_MIGRATION, DEAD_KEYS_MIGRATION, TOKEN_COLUMN_MIGRATION, QUEUES_MIGRATION,
  RESULTS_MIGRATION, SCHEDULES_MIGRATION, LIMITS_MIGRATION, RATE_MIGRATION, RESOURCES_LOCK_SEQ_MIGRATION, DOORBELL_MIGRATION,
  QUEUE_HEAD_MIGRATION, DOORBELL_RINGS_MIGRATION, ENQUEUE_CALL_MIGRATION, RING_CALL_MIGRATION, ENQUEUE_MANY_CALL_MIGRATION,
  CLAIM_CALL_MIGRATION, ENQUEUE_RING_CALL_MIGRATION, CLAIM_CALL_FEW_MIGRATION, DOORBELL_HAND_MIGRATION, HAND_CALL_MIGRATION,
  QUEUE_CURSORS_MIGRATION, CLAIM_CALL_FLEET_MIGRATION, DEDUP_TABLE_MIGRATION, CLAIM_CALL_GATE_MIGRATION, CLAIM_CALL_READ_BACK_MIGRATION,
  ENQUEUE_MANY_CALL_CONSECUTIVE_MIGRATION, KEYED_TABLE_MIGRATION, COMPLETE_CLAIM_CALL_MIGRATION, COMPLETE_CALL_MIGRATION,
  ENQUEUE_MANY_CALL_ORDINAL_MIGRATION, ENQUEUE_LEASED_MIGRATION, ENQUEUE_UNLOCKED_IDS_MIGRATION,
].sort((a, b) => a.version - b.version);

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
