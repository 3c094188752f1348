import type { Probe } from '../harness.js';

/** The keys of a namespace's current generation, read with plain SQL, as exact strings, sorted. */
export async function probeKeys(probe: Probe, prefix: string, ns: string): Promise<string[]> {
  const rows = await probe.query<{ k: Buffer }>(
    `SELECT COALESCE(d.k_long, d.k) AS k FROM \`${prefix}dones\` d JOIN \`${prefix}dones_ns\` n ON n.gen = d.gen WHERE n.name = ?`,
    [ns],
  );
  return rows.map((r) => Buffer.from(r.k).toString('utf8')).sort();
}

/** Rows of a namespace's current generation, counted with plain SQL. */
export async function probeCount(probe: Probe, prefix: string, ns: string): Promise<number> {
  const rows = await probe.query<{ n: unknown }>(
    `SELECT COUNT(*) AS n FROM \`${prefix}dones\` d JOIN \`${prefix}dones_ns\` n ON n.gen = d.gen WHERE n.name = ?`,
    [ns],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Every row in the dones table (all namespaces and generations). */
export async function probeAllRows(probe: Probe, prefix: string): Promise<number> {
  const rows = await probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${prefix}dones\``);
  return Number(rows[0]?.n ?? 0);
}

/** The database clock, in ms since the epoch. */
export async function probeNow(probe: Probe): Promise<number> {
  const rows = await probe.query<{ us: unknown }>("SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) AS us");
  return Number(rows[0]?.us) / 1000;
}
