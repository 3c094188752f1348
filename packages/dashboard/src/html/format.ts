import type { CappedCount } from '@taskrow/core';

/** A whole number with thousands separators. */
export const num = (n: number): string => n.toLocaleString('en-US');

/** A capped count: `100,000+` when the count stopped at its cap. */
export const count = (c: CappedCount): string => (c.exact ? num(c.value) : `${num(c.value)}+`);

/** Milliseconds as a short duration: `4.2 s`, `3 min 5 s`, `2 h 10 min`, `3 d 4 h`. */
export function duration(ms: number | null): string {
  if (ms === null) return '—';
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const s = Math.floor(seconds);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

/** A time as ISO text in UTC (the database clock's times). */
export const time = (d: Date | null): string => (d === null ? '—' : d.toISOString().replace('T', ' ').replace('Z', ' UTC'));

/** A JSON value pretty-printed (bigint-safe), for payloads. */
export function pretty(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) ?? String(value);
  } catch {
    return String(value);
  }
}
