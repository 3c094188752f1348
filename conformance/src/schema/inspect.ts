import type { Probe } from '@taskrow/core/conformance';

/** Tables under `prefix`, by name without the prefix, each with its SHOW CREATE TABLE text (prefix written as `<prefix>`). */
export async function schemaOf(probe: Probe, prefix: string, skip: readonly string[] = []): Promise<Map<string, string>> {
  const rows = await probe.query<{ t: string }>(
    'SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ? ORDER BY table_name',
    [`${prefix.replace(/_/g, '\\_')}%`],
  );
  const out = new Map<string, string>();
  for (const { t } of rows) {
    const name = t.slice(prefix.length);
    if (skip.includes(name)) continue;
    const create = await probe.query<Record<string, string>>(`SHOW CREATE TABLE \`${t}\``);
    // The AUTO_INCREMENT counter is data, not schema.
    out.set(
      name,
      String(create[0]?.['Create Table'])
        .split(prefix)
        .join('<prefix>')
        .replace(/ AUTO_INCREMENT=\d+/, ''),
    );
  }
  // Stored procedures, by name and body (`routine_definition`: the body as written, no definer).
  const procedures = await probe.query<{ r: string; body: string }>(
    "SELECT routine_name AS r, routine_definition AS body FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_type = 'PROCEDURE' AND routine_name LIKE ? ORDER BY routine_name",
    [`${prefix.replace(/_/g, '\\_')}%`],
  );
  for (const { r, body } of procedures) out.set(`procedure ${r.slice(prefix.length)}`, String(body).split(prefix).join('<prefix>'));
  return out;
}

/** `schemaOf` without the stored procedures: the tables a migration runner's steps create (the procedures are `migrate()`'s). */
export async function tablesOf(probe: Probe, prefix: string, skip: readonly string[] = []): Promise<Map<string, string>> {
  return new Map([...(await schemaOf(probe, prefix, skip))].filter(([name]) => !name.startsWith('procedure ')));
}

/** Columns of each table under `prefix` in ordinal order, by table name without the prefix. */
export async function columnsOf(probe: Probe, prefix: string): Promise<Record<string, string[]>> {
  const rows = await probe.query<{ t: string; c: string }>(
    `SELECT table_name AS t, column_name AS c FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name LIKE ? ORDER BY table_name, ordinal_position`,
    [`${prefix.replace(/_/g, '\\_')}%`],
  );
  const out: Record<string, string[]> = {};
  for (const r of rows) (out[r.t.slice(prefix.length)] ??= []).push(r.c);
  return out;
}

/** The versions recorded in `<prefix>schema_migrations`, ascending. */
export async function versionsOf(probe: Probe, prefix: string): Promise<number[]> {
  const rows = await probe.query<{ v: unknown }>(`SELECT version AS v FROM \`${prefix}schema_migrations\` ORDER BY version`);
  return rows.map((r) => Number(r.v));
}
