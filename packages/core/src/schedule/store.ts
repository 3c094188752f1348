import type { Executor } from '../engine/executor.js';
import type { SqlConnection } from '../port.js';
import { epochMicros, FROM_MICROS, NOW_MICROS } from '../sql.js';
import { toNumber } from '../validate.js';
import { policyOf, type ScheduleRow } from './spec.js';
import { cronOf, tickAfter, type Timing } from './ticks.js';
import type { ScheduleInfo, ScheduleJobOptions } from './types.js';

/** A schedule row as read, times as epoch microseconds. */
export interface StoredSchedule {
  readonly name: string;
  readonly queue: string;
  readonly cron: string | null;
  readonly tz: string | null;
  readonly every: number | null;
  readonly anchorUs: number;
  readonly payload: string;
  readonly options: string;
  readonly missed: string;
  readonly missedMax: number;
  readonly nextUs: number | null;
  readonly lastUs: number | null;
  readonly rev: number;
  readonly createdUs: number;
  readonly updatedUs: number;
}

/** The columns every read of a schedule selects (`now_us` is the database clock). */
export const SCHEDULE_COLUMNS = `\`name\`, \`queue\`, \`cron\`, \`tz\`, \`every_s\`, ${epochMicros('`anchor_at`')} AS anchor_us, \`payload\`, \`options\`,
  \`missed\`, \`missed_max\`, ${epochMicros('`next_at`')} AS next_us, ${epochMicros('`last_at`')} AS last_us, \`rev\`,
  ${epochMicros('`created_at`')} AS created_us, ${epochMicros('`updated_at`')} AS updated_us, ${NOW_MICROS} AS now_us`;

const text = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
const micros = (v: unknown): number | null => (v === null || v === undefined ? null : toNumber(v));

/** A row of `SCHEDULE_COLUMNS` as a `StoredSchedule`, with the database's now. */
export function storedOf(r: Record<string, unknown>): StoredSchedule & { nowUs: number } {
  return {
    name: text(r['name']),
    queue: text(r['queue']),
    cron: r['cron'] === null ? null : text(r['cron']),
    tz: r['tz'] === null ? null : text(r['tz']),
    every: r['every_s'] === null ? null : toNumber(r['every_s']),
    anchorUs: toNumber(r['anchor_us']),
    payload: text(r['payload']),
    options: text(r['options']),
    missed: text(r['missed']),
    missedMax: toNumber(r['missed_max']),
    nextUs: micros(r['next_us']),
    lastUs: micros(r['last_us']),
    rev: toNumber(r['rev']),
    createdUs: toNumber(r['created_us']),
    updatedUs: toNumber(r['updated_us']),
    nowUs: toNumber(r['now_us']),
  };
}

/** When a stored schedule ticks. */
export function timingOf(s: Pick<StoredSchedule, 'cron' | 'tz' | 'every' | 'anchorUs'>): Timing {
  return s.cron !== null ? { cron: cronOf('stored cron', s.cron, s.tz ?? 'UTC') } : { everyUs: s.every! * 1e6, anchorUs: s.anchorUs };
}

const dateOf = (us: number | null): Date | null => (us === null ? null : new Date(Math.floor(us / 1000)));

/** A stored schedule as the API shows it. */
export function infoOf<P>(s: StoredSchedule): ScheduleInfo<P> {
  return {
    name: s.name,
    queue: s.queue,
    cron: s.cron,
    tz: s.tz,
    every: s.every === null ? null : s.every * 1000,
    payload: JSON.parse(s.payload) as P,
    options: JSON.parse(s.options) as ScheduleJobOptions,
    missed: policyOf(s.missed, s.missedMax),
    nextAt: dateOf(s.nextUs),
    lastAt: dateOf(s.lastUs),
    createdAt: dateOf(s.createdUs)!,
    updatedAt: dateOf(s.updatedUs)!,
  };
}

/** The schedule `name` as stored, or undefined; a plain (non-locking) read. */
export async function readSchedule(
  conn: SqlConnection | Executor,
  table: string,
  name: string,
  where = '',
): Promise<(StoredSchedule & { nowUs: number }) | undefined> {
  const { rows } = await conn.query(`SELECT ${SCHEDULE_COLUMNS} FROM ${table} WHERE \`name\` = ?${where}`, [name]);
  return rows[0] ? storedOf(rows[0]) : undefined;
}

/** Every schedule by name; a plain read. */
export async function readAll(exec: Executor, table: string): Promise<StoredSchedule[]> {
  const { rows } = await exec.query(`SELECT ${SCHEDULE_COLUMNS} FROM ${table} ORDER BY \`name\``);
  return rows.map(storedOf);
}

/** `cron`, `tz` and `every_s` as stored equal the new row's (`VALUES(...)`): the timing is kept. */
const SAME_TIMING = '`cron` <=> VALUES(`cron`) AND `tz` <=> VALUES(`tz`) AND `every_s` <=> VALUES(`every_s`)';

/**
 * Inserts or replaces `row` in one transaction and reads it back. The first tick (and an
 * interval's anchor, the whole second of now) come from the database clock read in the same
 * transaction. An update that keeps the timing keeps `next_at` and the anchor (assigned first:
 * MySQL and MariaDB assign an upsert's columns left to right). Racing a tick, it waits for the
 * tick's row lock and then bumps `rev`, so the tick commits first or loses its compare-and-set.
 */
export async function upsertSchedule(exec: Executor, table: string, row: ScheduleRow): Promise<StoredSchedule> {
  return exec.transaction(
    async (conn) => {
      const { rows } = await conn.query<{ now_us: unknown }>(`SELECT ${NOW_MICROS} AS now_us`);
      const nowUs = toNumber(rows[0]!.now_us);
      const anchorUs = Math.floor(nowUs / 1e6) * 1e6;
      const nextUs = tickAfter(timingOf({ ...row, anchorUs }), nowUs);
      await conn.query(
        `INSERT INTO ${table} (\`name\`, \`queue\`, \`cron\`, \`tz\`, \`every_s\`, \`anchor_at\`, \`payload\`, \`options\`, \`missed\`, \`missed_max\`, \`next_at\`, \`rev\`, \`created_at\`, \`updated_at\`)
       VALUES (?, ?, ?, ?, ?, ${FROM_MICROS}, ?, ?, ?, ?, ${nextUs === null ? 'NULL' : FROM_MICROS}, 0, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))
       ON DUPLICATE KEY UPDATE \`next_at\` = IF(${SAME_TIMING}, \`next_at\`, VALUES(\`next_at\`)), \`anchor_at\` = IF(${SAME_TIMING}, \`anchor_at\`, VALUES(\`anchor_at\`)),
         \`queue\` = VALUES(\`queue\`), \`cron\` = VALUES(\`cron\`), \`tz\` = VALUES(\`tz\`), \`every_s\` = VALUES(\`every_s\`), \`payload\` = VALUES(\`payload\`),
         \`options\` = VALUES(\`options\`), \`missed\` = VALUES(\`missed\`), \`missed_max\` = VALUES(\`missed_max\`), \`rev\` = \`rev\` + 1, \`updated_at\` = VALUES(\`updated_at\`)`,
        [row.name, row.queue, row.cron, row.tz, row.every, anchorUs, row.payload, row.options, row.missed, row.missedMax, ...(nextUs === null ? [] : [nextUs])],
      );
      return (await readSchedule(conn, table, row.name))!;
    },
    { isolation: 'READ COMMITTED' },
  ); // the upsert meets the latest committed row (a tick's), never a snapshot's
}

/** Deletes the schedule `name`; true when it existed. */
export async function deleteSchedule(exec: Executor, table: string, name: string): Promise<boolean> {
  return (await exec.query(`DELETE FROM ${table} WHERE \`name\` = ?`, [name])).affectedRows > 0;
}
