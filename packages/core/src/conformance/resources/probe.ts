import type { Probe } from '../harness.js';

/** One lock row as the probe sees it; `live` judged by the database clock. */
export interface ProbedLock {
  readonly key: string;
  readonly holder: string;
  readonly mode: 'reader' | 'writer';
  readonly live: boolean;
}

const t = (prefix: string, name: string): string => `\`${prefix}${name}\``;

/** Every lock row on `keys` (or on every key), sorted by key, mode, holder. */
export async function probeLocks(probe: Probe, prefix: string, keys?: readonly string[]): Promise<ProbedLock[]> {
  const filter = keys ? ` WHERE r.k IN (${keys.map(() => '?').join(', ') || 'NULL'})` : '';
  const rows = await probe.query<{ k: Buffer; holder: string; mode: string; live: unknown }>(
    `SELECT r.k, LOWER(HEX(l.holder)) AS holder, l.mode, l.lease_until > UTC_TIMESTAMP(6) AS live
     FROM ${t(prefix, 'resource_locks')} l JOIN ${t(prefix, 'resources')} r ON r.h = l.h${filter}`,
    keys ? keys.map((k) => Buffer.from(k, 'utf8')) : [],
  );
  return rows
    .map((r) => ({ key: Buffer.from(r.k).toString('utf8'), holder: r.holder, mode: r.mode as 'reader' | 'writer', live: Number(r.live) === 1 }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.mode.localeCompare(b.mode) || a.holder.localeCompare(b.holder)));
}

/** `key:mode` of every live lock on `keys`, sorted: a compact picture for assertions. */
export async function liveLocks(probe: Probe, prefix: string, keys?: readonly string[]): Promise<string[]> {
  return (await probeLocks(probe, prefix, keys)).filter((l) => l.live).map((l) => `${l.key}:${l.mode}`);
}

/** All lock rows and job rows, live or not. */
export async function probeRowCounts(probe: Probe, prefix: string): Promise<{ locks: number; jobs: number }> {
  const [l] = await probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${t(prefix, 'resource_locks')}`);
  const [j] = await probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${t(prefix, 'resource_jobs')}`);
  return { locks: Number(l?.n), jobs: Number(j?.n) };
}

/** The keys among `keys` that exist (produced, not expired), read with plain SQL, sorted. */
export async function probeExisting(probe: Probe, prefix: string, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const rows = await probe.query<{ k: Buffer }>(
    `SELECT k FROM ${t(prefix, 'resources')} WHERE k IN (${keys.map(() => '?').join(', ')})
     AND produced_at IS NOT NULL AND (expires_at IS NULL OR expires_at > UTC_TIMESTAMP(6))`,
    keys.map((k) => Buffer.from(k, 'utf8')),
  );
  return rows.map((r) => Buffer.from(r.k).toString('utf8')).sort();
}

/** A key row: who produced it and seconds from now until it expires (null: never). */
export async function probeKey(probe: Probe, prefix: string, key: string): Promise<{ producedBy: string | null; expiresIn: number | null } | undefined> {
  const rows = await probe.query<{ by: Buffer | null; s: unknown }>(
    `SELECT produced_by AS \`by\`, TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) / 1e6 AS s FROM ${t(prefix, 'resources')} WHERE k = ?`,
    [Buffer.from(key, 'utf8')],
  );
  const r = rows[0];
  if (!r) return undefined;
  return { producedBy: r.by === null ? null : Buffer.from(r.by).toString('utf8'), expiresIn: r.s === null ? null : Number(r.s) };
}

/** Seconds from now until the lease of `holder`'s locks ends (the smallest), or null when it has none. */
export async function leaseLeft(probe: Probe, prefix: string, holder: string): Promise<number | null> {
  const rows = await probe.query<{ s: unknown }>(
    `SELECT MIN(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_until)) / 1e6 AS s FROM ${t(prefix, 'resource_locks')} WHERE holder = UNHEX(?)`,
    [holder],
  );
  return rows[0]?.s === null || rows[0]?.s === undefined ? null : Number(rows[0].s);
}

/** Moves time for one holder: its locks' and job row's lease ended `ago` seconds ago. */
export async function expireHolder(probe: Probe, prefix: string, holder: string, ago = 1): Promise<void> {
  for (const table of ['resource_locks', 'resource_jobs']) {
    await probe.query(`UPDATE ${t(prefix, table)} SET lease_until = UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND WHERE holder = UNHEX(?)`, [
      Math.round(ago * 1e6),
      holder,
    ]);
  }
}

/** Moves time for one key: it stopped existing `ago` seconds ago (its TTL passed). */
export async function expireKey(probe: Probe, prefix: string, key: string, ago = 1): Promise<void> {
  await probe.query(`UPDATE ${t(prefix, 'resources')} SET expires_at = UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND WHERE k = ?`, [
    Math.round(ago * 1e6),
    Buffer.from(key, 'utf8'),
  ]);
}

/** Every edge as `kind from -> to`, sorted. */
export async function probeEdges(probe: Probe, prefix: string): Promise<string[]> {
  const rows = await probe.query<{ kind: string; src: Buffer; dst: Buffer }>(`SELECT kind, src, dst FROM ${t(prefix, 'resource_edges')}`);
  return rows.map((r) => `${r.kind} ${Buffer.from(r.src).toString('utf8')} -> ${Buffer.from(r.dst).toString('utf8')}`).sort();
}

/** Sets the last-seen time of the edges from `src` (a sanitized name) to `at`. */
export async function setEdgeTime(probe: Probe, prefix: string, src: string, at: string): Promise<void> {
  await probe.query(`UPDATE ${t(prefix, 'resource_edges')} SET last_seen = ? WHERE src = ?`, [at, Buffer.from(src, 'utf8')]);
}

/** The conflicts one statement sees among the live locks, as `key: writer <holder> with reader <holder>` lines. */
async function conflictsInOneView(probe: Probe, prefix: string): Promise<string[]> {
  const rows = await probe.query<{ k: Buffer; holder: string; mode: string; present: unknown }>(
    `SELECT r.k, LOWER(HEX(l.holder)) AS holder, l.mode,
            (r.produced_at IS NOT NULL AND (r.expires_at IS NULL OR r.expires_at > UTC_TIMESTAMP(6))) AS present
     FROM ${t(prefix, 'resource_locks')} l JOIN ${t(prefix, 'resources')} r ON r.h = l.h
     WHERE l.lease_until > UTC_TIMESTAMP(6)`,
  );
  const byKey = new Map<string, { writers: string[]; readers: string[]; present: boolean }>();
  for (const r of rows) {
    const key = Buffer.from(r.k).toString('utf8');
    const e = byKey.get(key) ?? { writers: [], readers: [], present: Number(r.present) === 1 };
    (r.mode === 'writer' ? e.writers : e.readers).push(r.holder);
    byKey.set(key, e);
  }
  const out: string[] = [];
  for (const [key, { writers, readers, present }] of byKey) {
    writers.sort();
    readers.sort();
    for (const [i, w] of writers.entries()) for (const o of writers.slice(i + 1)) out.push(`${key}: writer ${w} with writer ${o}`);
    for (const w of writers) for (const r of readers) out.push(`${key}: writer ${w} with reader ${r}`);
    if (!present) for (const r of readers) out.push(`${key}: reader ${r} while the key does not exist`);
  }
  return out.sort();
}

/**
 * The invariants among live locks: no key with two writers, with a writer and a reader, or with a
 * reader while the key does not exist. Each conflict is reported only when two statements, one
 * after the other, both see it between the same holders.
 *
 * One statement is not enough on MariaDB: its read view is built by walking the active
 * transactions while others keep committing, so one statement can see a transaction that
 * committed later (a reader's acquisition, made after a writer released) and miss one that
 * committed earlier (that release), and so report a writer and a reader that never held at the
 * same time. A conflict the second statement also sees was real when that statement started: both
 * acquisitions had committed (the first statement saw them) and neither release had (the second
 * would have seen it).
 */
export async function probeViolations(probe: Probe, prefix: string): Promise<string[]> {
  const first = await conflictsInOneView(probe, prefix);
  if (first.length === 0) return [];
  const second = new Set(await conflictsInOneView(probe, prefix));
  return first.filter((c) => second.has(c));
}
