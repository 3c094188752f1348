import type { Executor } from '../engine/executor.js';
import { toNumber } from '../validate.js';
import { MIGRATIONS, migrationsTableSql, SCHEMA_VERSION } from './migrations.js';
import { table } from './tables.js';

/** What `migrate()` did. */
export interface MigrateResult {
  /** Versions this call applied (another process may have applied the rest). */
  readonly applied: number[];
  /** The schema version now recorded. */
  readonly version: number;
}

/**
 * Creates or upgrades taskrow's tables. Idempotent: a second call applies nothing; two processes
 * migrating at once both succeed, because every statement is `IF NOT EXISTS` and versions are
 * recorded with a keyed upsert. MUST NOT drop or rewrite data.
 */
export async function migrate(exec: Executor, prefix: string): Promise<MigrateResult> {
  const migrations = table(prefix, 'schema_migrations');
  await exec.query(migrationsTableSql(prefix));
  const { rows } = await exec.query<{ version: unknown }>(`SELECT \`version\` FROM ${migrations}`);
  const done = new Set(rows.map((r) => toNumber(r.version)));
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue;
    for (const sql of m.statements(prefix)) await exec.query(sql);
    await exec.query(
      `INSERT INTO ${migrations} (\`version\`, \`name\`, \`applied_at\`) VALUES (?, ?, UTC_TIMESTAMP(6))
       ON DUPLICATE KEY UPDATE \`version\` = \`version\``,
      [m.version, m.name],
    );
    applied.push(m.version);
  }
  return { applied, version: Math.max(SCHEMA_VERSION, ...done) };
}

/** The full DDL, each statement ending in `;`, for review or for applying by hand. */
export function schemaSql(prefix: string): string {
  const migrations = table(prefix, 'schema_migrations');
  const out = [migrationsTableSql(prefix)];
  for (const m of MIGRATIONS) {
    out.push(...m.statements(prefix));
    out.push(
      `INSERT INTO ${migrations} (\`version\`, \`name\`, \`applied_at\`) VALUES (${m.version}, '${m.name}', UTC_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE \`version\` = \`version\``,
    );
  }
  return `${out.join(';\n\n')};\n`;
}
