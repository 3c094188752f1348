import type { Executor } from '../../engine/executor.js';
import type { SqlConnection } from '../../port.js';
import { toNumber } from '../../validate.js';
import { epochMicros, type QueueTables } from '../model/tables.js';

/**
 * Pauses `queue` for every worker and `claim()` caller: from the commit on, claims of the queue
 * return nothing (a claim already past its pause check still returns its jobs). Idempotent: pausing
 * a paused queue keeps its first pause time. Enqueues, acks and heartbeats go on.
 */
export async function pauseQueue(exec: Executor, t: QueueTables, queue: string): Promise<void> {
  await exec.query(
    `INSERT INTO ${t.queues} (\`queue\`, \`paused_at\`) VALUES (?, UTC_TIMESTAMP(6))
     ON DUPLICATE KEY UPDATE \`paused_at\` = COALESCE(\`paused_at\`, VALUES(\`paused_at\`))`,
    [queue],
  );
}

/** Resumes `queue`: from the commit on, claims take its jobs again. Idempotent. */
export async function resumeQueue(exec: Executor, t: QueueTables, queue: string): Promise<void> {
  await exec.query(`UPDATE ${t.queues} SET \`paused_at\` = NULL WHERE \`queue\` = ?`, [queue]);
}

/**
 * When `queue` was paused (database clock), or null when it is not: a non-locking read of the
 * latest committed state (claims run READ COMMITTED), so it never waits on a pause or resume in
 * flight.
 */
export async function pausedSince(conn: SqlConnection | Executor, t: QueueTables, queue: string): Promise<Date | null> {
  const { rows } = await conn.query<{ us: unknown }>(
    `SELECT ${epochMicros('`paused_at`')} AS us FROM ${t.queues} WHERE \`queue\` = ? AND \`paused_at\` IS NOT NULL`,
    [queue],
  );
  return rows[0] ? new Date(toNumber(rows[0].us) / 1000) : null;
}
