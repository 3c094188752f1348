import type { Executor } from '../../engine/executor.js';
import { invalid } from '../../errors.js';
import type { SqlConnection } from '../../port.js';
import { intArg, msArg, optionsOf, show, toNumber } from '../../validate.js';
import { placeholderList } from '../../chunk.js';
import type { QueueTables } from '../model/tables.js';

/** The most starts a rate limit allows per window. */
export const MAX_RATE_LIMIT = 100_000;
/** The longest and shortest rate window, in milliseconds. */
export const MAX_RATE_WINDOW_MS = 24 * 3600 * 1000;
export const MIN_RATE_WINDOW_MS = 1;

/** A queue's rate limit: at most `limit` jobs start in any `per` milliseconds. */
export interface RateLimit {
  readonly limit: number;
  readonly per: number;
}

/** Validated `setRateLimit` argument. MUST throw before any SQL on bad input. */
export function rateArg(value: unknown): RateLimit | null {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(`setRateLimit() takes { limit, per } or null, got ${show(value)}`);
  const o = optionsOf('setRateLimit()', value, ['limit', 'per']);
  return {
    limit: intArg('setRateLimit() limit', o['limit'], 1, MAX_RATE_LIMIT),
    per: msArg('setRateLimit() per', o['per'], MIN_RATE_WINDOW_MS, MAX_RATE_WINDOW_MS),
  };
}

/**
 * Stores the rate limit of `queue` (null: none) in one transaction: as many slot rows as `limit`,
 * each with the window. Slots kept keep their next free time; new ones are free at once; slots
 * past the new limit are deleted (so a lowered limit holds fully one window later). Idempotent.
 */
export async function setRate(exec: Executor, t: QueueTables, queue: string, rate: RateLimit | null): Promise<void> {
  await exec.transaction(async (conn) => {
    await conn.query(`DELETE FROM ${t.rateSlots} WHERE \`queue\` = ? AND \`slot\` >= ?`, [queue, rate?.limit ?? 0]);
    if (rate === null) return;
    const windowUs = Math.round(rate.per * 1000);
    await conn.query(`UPDATE ${t.rateSlots} SET \`window_us\` = ? WHERE \`queue\` = ?`, [windowUs, queue]);
    for (let from = 0; from < rate.limit; from += 1000) {
      const slots = Array.from({ length: Math.min(1000, rate.limit - from) }, (_, i) => from + i);
      await conn.query(
        `INSERT IGNORE INTO ${t.rateSlots} (\`queue\`, \`slot\`, \`window_us\`, \`free_at\`) VALUES ${slots.map(() => '(?, ?, ?, UTC_TIMESTAMP(6))').join(', ')}`,
        slots.flatMap((s) => [queue, s, windowUs]),
      );
    }
  });
}

/** The rate limit of `queue`, or null. Read-only. */
export async function getRate(exec: Executor, t: QueueTables, queue: string): Promise<RateLimit | null> {
  const { rows } = await exec.query<{ n: unknown; w: unknown }>(`SELECT COUNT(*) AS n, MAX(\`window_us\`) AS w FROM ${t.rateSlots} WHERE \`queue\` = ?`, [
    queue,
  ]);
  const n = toNumber(rows[0]?.n ?? 0);
  return n === 0 ? null : { limit: n, per: toNumber(rows[0]!.w) / 1000 };
}

/**
 * In a claim's transaction: locks up to `want` free slots of a rate-limited queue, skipping slots
 * other claimers hold (never waits), and resolves to their numbers. The claim MUST start at most
 * that many jobs and MUST pass the slots it used to `useSlots` before it commits.
 */
export async function takeSlots(conn: SqlConnection, t: QueueTables, queue: string, want: number): Promise<number[]> {
  const { rows } = await conn.query<{ slot: unknown }>(
    `SELECT \`slot\` FROM ${t.rateSlots} FORCE INDEX (\`free\`) WHERE \`queue\` = ? AND \`free_at\` <= UTC_TIMESTAMP(6)
     ORDER BY \`free_at\` LIMIT ${want} FOR UPDATE SKIP LOCKED`,
    [queue],
  );
  return rows.map((r) => toNumber(r.slot));
}

/** Marks `slots` used now: each is free again one window later (database clock). */
export async function useSlots(conn: SqlConnection, t: QueueTables, queue: string, slots: readonly number[]): Promise<void> {
  if (slots.length === 0) return;
  await conn.query(
    `UPDATE ${t.rateSlots} SET \`free_at\` = UTC_TIMESTAMP(6) + INTERVAL \`window_us\` MICROSECOND WHERE \`queue\` = ? AND \`slot\` IN (${placeholderList(slots.length)})`,
    [queue, ...slots],
  );
}
