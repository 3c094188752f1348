import type { Engine } from './types.js';

/** `10.11.19-MariaDB-0+deb12u1` -> `10.11.19`; throws on a string with no version in it. */
export function shortVersion(versionString: string): string {
  const m = /^(\d+\.\d+\.\d+)/.exec(versionString);
  if (!m?.[1]) throw new Error(`cannot read a version from ${JSON.stringify(versionString)}`);
  return m[1];
}

/** The engine a `SELECT VERSION()` string belongs to. */
export function engineOf(versionString: string): Engine {
  return /mariadb/i.test(versionString) ? 'mariadb' : 'mysql';
}

/** True when `version` is `wanted` or starts with `wanted.`: `10.11.19` matches `10.11`, not `10.1`. */
export function versionMatches(version: string, wanted: string | undefined): boolean {
  return wanted === undefined || version === wanted || version.startsWith(`${wanted}.`);
}

/** Compares dotted versions numerically (for "the newest available"). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
