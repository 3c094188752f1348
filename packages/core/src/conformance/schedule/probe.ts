import type { Probe } from '../harness.js';

/** One schedule row as the probe reads it: times in epoch microseconds, `nowUs` the database clock. */
export interface ProbedSchedule {
  readonly name: string;
  readonly queue: string;
  readonly cron: string | null;
  readonly every: number | null;
  readonly payload: unknown;
  readonly options: unknown;
  readonly missed: string;
  readonly nextUs: number | null;
  readonly lastUs: number | null;
  readonly nowUs: number;
}

const table = (prefix: string): string => `\`${prefix}queue_schedules\``;
const us = (col: string): string => `TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ${col})`;
const text = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));

/** Every schedule row under `prefix`, by name (written out here, not imported: the probe is a side channel). */
export async function probeSchedules(probe: Probe, prefix: string): Promise<ProbedSchedule[]> {
  const rows = await probe.query<Record<string, unknown>>(
    `SELECT name, queue, cron, every_s, payload, options, missed, ${us('next_at')} AS next_us, ${us('last_at')} AS last_us, ${us('UTC_TIMESTAMP(6)')} AS now_us
     FROM ${table(prefix)} ORDER BY name`,
  );
  return rows.map((r) => ({
    name: text(r['name']),
    queue: text(r['queue']),
    cron: r['cron'] === null ? null : text(r['cron']),
    every: r['every_s'] === null ? null : Number(r['every_s']),
    payload: JSON.parse(text(r['payload'])),
    options: JSON.parse(text(r['options'])),
    missed: text(r['missed']),
    nextUs: r['next_us'] === null ? null : Number(r['next_us']),
    lastUs: r['last_us'] === null ? null : Number(r['last_us']),
    nowUs: Number(r['now_us']),
  }));
}

/** The row of schedule `name`, or undefined. */
export async function probeSchedule(probe: Probe, prefix: string, name: string): Promise<ProbedSchedule | undefined> {
  return (await probeSchedules(probe, prefix)).find((s) => s.name === name);
}

/** Moves time for schedule `name`: its `next_at` moves `seconds` (negative: into the past). */
export async function shiftNextAt(probe: Probe, prefix: string, name: string, seconds: number): Promise<void> {
  await probe.query(`UPDATE ${table(prefix)} SET next_at = next_at + INTERVAL ? MICROSECOND WHERE name = ?`, [Math.round(seconds * 1e6), name]);
}

/** `run_at` of every job of `queue` in epoch microseconds, ascending: the ticks its jobs are for. */
export async function probeRunAts(probe: Probe, prefix: string, queue: string): Promise<number[]> {
  const rows = await probe.query<{ r: unknown }>(`SELECT ${us('run_at')} AS r FROM \`${prefix}queue_jobs\` WHERE queue = ? ORDER BY run_at, id`, [queue]);
  return rows.map((x) => Number(x.r));
}
