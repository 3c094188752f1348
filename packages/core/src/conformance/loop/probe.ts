import type { Loop, LoopIdOf, LoopIdType } from '../../loop/types.js';
import { freshName, type Probe } from '../harness.js';
import type { SuiteContext } from '../session.js';

/** One row of a loop table as the probe reads it: ids as text, times as numbers (null when NULL). */
export interface ProbeRow {
  readonly id: string;
  readonly lastUpdated: number | null;
  readonly lockUntil: number | null;
}

/** The integers from `from` to `to`, both included. */
export const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Every row of `table`, in primary-key order, read with plain SQL. */
export async function probeRows(probe: Probe, table: string): Promise<ProbeRow[]> {
  const rows = await probe.query<{ i: unknown; lu: unknown; lk: unknown }>(
    `SELECT CAST(\`id\` AS CHAR) AS i, \`last_updated\` AS lu, \`lock_until\` AS lk FROM \`${table}\` ORDER BY \`id\``,
  );
  return rows.map((r) => ({ id: Buffer.isBuffer(r.i) ? r.i.toString('utf8') : String(r.i), lastUpdated: num(r.lu), lockUntil: num(r.lk) }));
}

/** The rows of `table` keyed by id text. */
export async function probeById(probe: Probe, table: string): Promise<Map<string, ProbeRow>> {
  return new Map((await probeRows(probe, table)).map((r) => [r.id, r]));
}

/** The ids of `table` as text, in primary-key order. */
export async function probeIds(probe: Probe, table: string): Promise<string[]> {
  return (await probeRows(probe, table)).map((r) => r.id);
}

/** The database clock: `UNIX_TIMESTAMP()`. */
export async function probeNow(probe: Probe): Promise<number> {
  const rows = await probe.query<{ now: unknown }>('SELECT UNIX_TIMESTAMP() AS now');
  return Number(rows[0]?.now);
}

/**
 * Moves time forward by `seconds` for the rows of `table` (all, or those whose id is in `ids`):
 * every stored time moves back, which is what the rows would see after `seconds` of waiting.
 */
export async function passTime(probe: Probe, table: string, seconds: number, ids?: readonly (number | string | bigint)[]): Promise<void> {
  const where = ids ? ` WHERE \`id\` IN (${ids.map(() => '?').join(', ')})` : '';
  await probe.query(`UPDATE \`${table}\` SET \`last_updated\` = \`last_updated\` - ?, \`lock_until\` = \`lock_until\` - ?${where}`, [
    seconds,
    seconds,
    ...(ids ?? []).map((i) => (typeof i === 'bigint' ? i.toString() : i)),
  ]);
}

/**
 * Sets one id's columns to seconds from `now` (null writes NULL). `now` defaults to the database
 * clock at the moment of the write; pass one value read once when several rows must agree.
 */
export async function setTimes(
  probe: Probe,
  table: string,
  id: number | string,
  times: { lastUpdated?: number | null; lockUntil?: number | null },
  now?: number,
): Promise<void> {
  const sets: string[] = [];
  const params: unknown[] = [];
  for (const [col, v] of [
    ['last_updated', times.lastUpdated],
    ['lock_until', times.lockUntil],
  ] as const) {
    if (v === undefined) continue;
    if (v === null) sets.push(`\`${col}\` = NULL`);
    else if (now === undefined) {
      sets.push(`\`${col}\` = UNIX_TIMESTAMP() + ?`);
      params.push(v);
    } else {
      sets.push(`\`${col}\` = ?`);
      params.push(now + v);
    }
  }
  await probe.query(`UPDATE \`${table}\` SET ${sets.join(', ')} WHERE \`id\` = ?`, [...params, id]);
}

/** Every row of the loop as one string, to show that a rejected call changed nothing. */
export async function snapshot(probe: Probe, table: string): Promise<string> {
  return JSON.stringify(await probeRows(probe, table));
}

/** A fresh loop on the suite's taskrow. */
export async function freshLoop<Tx, T extends LoopIdType = 'int'>(c: SuiteContext<Tx>, idType?: T): Promise<Loop<LoopIdOf<T>>> {
  return c.session.taskrow.createLoop<T>(freshName('lp'), idType === undefined ? undefined : { idType });
}
