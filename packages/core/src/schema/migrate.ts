import type { Executor } from '../engine/executor.js';
import { toNumber } from '../validate.js';
import { validatePrefix } from '../names.js';
import { MIGRATIONS, migrationsTableSql, SCHEMA_VERSION, type Migration } from './migrations.js';
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

/** The statement that records version `m` as applied (a keyed upsert: safe to run twice). */
function recordVersionSql(prefix: string, m: Migration): string {
  return `INSERT INTO ${table(prefix, 'schema_migrations')} (\`version\`, \`name\`, \`applied_at\`) VALUES (${m.version}, '${m.name}', UTC_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE \`version\` = \`version\``;
}

/**
 * The full DDL under `prefix` (validated), each statement ending in `;`, for review or for applying
 * by hand; needs no connection. Applied in order it leaves the schema `migrate()` would.
 */
export function schemaSql(prefix: string): string {
  const p = validatePrefix(prefix);
  const out = [migrationsTableSql(p)];
  for (const m of MIGRATIONS) out.push(...m.statements(p), recordVersionSql(p, m));
  return `${out.join(';\n\n')};\n`;
}

/** One schema version as another migration runner (Knex, Kysely) applies it. */
export interface MigrationStep {
  readonly version: number;
  readonly name: string;
  /** `0001_dones`: the zero-padded version and the name, so names sort in version order. */
  readonly id: string;
  /**
   * The version table, the version's own statements and the record of the version: run in order
   * they leave the database exactly as `migrate()` does, so `migrate()` afterwards applies nothing.
   * Every statement is idempotent.
   */
  readonly statements: readonly string[];
}

/** Every schema version under `prefix` (validated), oldest first, for applying through another migration runner. */
export function migrationSteps(prefix: string): MigrationStep[] {
  const p = validatePrefix(prefix);
  return MIGRATIONS.map((m) => ({
    version: m.version,
    name: m.name,
    id: `${String(m.version).padStart(4, '0')}_${m.name}`,
    statements: [migrationsTableSql(p), ...m.statements(p), recordVersionSql(p, m)],
  }));
}
