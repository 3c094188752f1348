import type { Dialect } from '../dialect.js';
import type { Executor } from '../engine/executor.js';
import { RETIRED_ROUTINES, ROUTINES } from '../queue/procedures.js';
import { installRoutines, routineStatements, type RoutinesResult } from '../queue/routines/index.js';
import { invalid } from '../errors.js';
import { show, toNumber } from '../validate.js';
import { validatePrefix } from '../names.js';
import { MIGRATIONS, migrationsTableSql, minBuildOf, SCHEMA_VERSION, type Migration } from './migrations.js';
import { table } from '../tables.js';

/** What `migrate()` did. */
export interface MigrateResult {
  /** Versions this call applied (another process may have applied the rest). */
  readonly applied: number[];
  /** The schema version now recorded. */
  readonly version: number;
  /** What became of the Queue's stored procedures (see `RoutinesResult`): none is a schema version. */
  readonly routines: RoutinesResult;
}

/**
 * Creates or upgrades taskrow's tables, then installs the Queue's stored procedures by content
 * (each created once, replaced only when its text changed, those of earlier builds no longer
 * called dropped: see `installRoutines`). Idempotent: a
 * second call applies and creates nothing; two processes migrating at once both succeed, because
 * every statement is `IF NOT EXISTS` and versions are recorded with a keyed upsert (a rename, which
 * no statement makes idempotent, is checked for first: `Migration.appliedIf`). A procedure the
 * server refuses is reported in `routines.refused`, and tried again by the next call. MUST NOT
 * drop or rewrite data.
 */
export async function migrate(exec: Executor, prefix: string): Promise<MigrateResult> {
  const migrations = table(prefix, 'schema_migrations');
  await exec.query(migrationsTableSql(prefix));
  const { rows } = await exec.query<{ version: unknown }>(`SELECT \`version\` FROM ${migrations}`);
  const done = new Set(rows.map((r) => toNumber(r.version)));
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue;
    await applyStatements(exec, prefix, m);
    await exec.query(recordVersionSql(prefix, m));
    applied.push(m.version);
  }
  const routines = await installRoutines(exec, ROUTINES, prefix, RETIRED_ROUTINES);
  return { applied, version: Math.max(SCHEMA_VERSION, ...done), routines };
}

/** Runs `m`'s statements, unless (or, after a failure, because) its `appliedIf` finds the change in place. */
function applyStatements(exec: Executor, prefix: string, m: Migration): Promise<void> {
  return applyChange(m.statements(prefix), m.appliedIf?.(prefix), async (sql) => (await exec.query(sql)).rows);
}

/** Runs `change` in order, unless `appliedIf` returns a row before, or after a failure of, the change. */
async function applyChange(change: readonly string[], appliedIf: string | undefined, run: (sql: string) => Promise<readonly unknown[]>): Promise<void> {
  const inPlace = async (): Promise<boolean> => appliedIf !== undefined && (await run(appliedIf)).length > 0;
  if (await inPlace()) return;
  try {
    for (const sql of change) await run(sql);
  } catch (err) {
    if (!(await inPlace())) throw err;
  }
}

/** The statement that records version `m` as applied (a keyed upsert: safe to run twice). */
function recordVersionSql(prefix: string, m: Migration): string {
  return `INSERT INTO ${table(prefix, 'schema_migrations')} (\`version\`, \`name\`, \`applied_at\`, \`min_build\`)
VALUES (${m.version}, '${m.name}', UTC_TIMESTAMP(6), ${minBuildOf(m)}) ON DUPLICATE KEY UPDATE \`version\` = \`version\``;
}

/**
 * The full DDL under `prefix` (validated), each statement ending in `;`, for review or for applying
 * by hand; needs no connection. Applied in order it leaves the tables `migrate()` would, and with
 * `engine` (`'mysql'` or `'mariadb'`, else `INVALID_ARGUMENT`) the stored procedures `migrate()`
 * installs on that server family too (without it, none: taskrow then takes its path without them).
 */
export function schemaSql(prefix: string, engine?: Dialect['engine']): string {
  const p = validatePrefix(prefix);
  if (engine !== undefined && engine !== 'mysql' && engine !== 'mariadb') throw invalid(`schemaSql() engine must be 'mysql' or 'mariadb', got ${show(engine)}`);
  const out = [migrationsTableSql(p)];
  for (const m of MIGRATIONS) out.push(...m.statements(p), recordVersionSql(p, m));
  if (engine !== undefined) out.push(...routineStatements(ROUTINES, p, engine).map((r) => forCommandLine(r.sql)));
  return `${out.join(';\n\n')};\n`;
}

/**
 * A statement as the `mysql` / `mariadb` command-line clients take it: a stored procedure's body
 * holds `;`, so it is sent between `DELIMITER` lines (the statement list ends it with `;`).
 */
function forCommandLine(sql: string): string {
  return sql.startsWith('CREATE PROCEDURE') ? `DELIMITER //\n${sql}//\nDELIMITER ` : sql;
}

/**
 * One schema version as another migration runner (Knex, Kysely) applies it. The stored procedures
 * are no step: `tr.migrate()` at start-up installs them (it changes no table a runner applied).
 */
export interface MigrationStep {
  readonly version: number;
  readonly name: string;
  /** `0001_baseline`: the zero-padded version and the name, so names sort in version order. */
  readonly id: string;
  /**
   * The version table, the version's own statements (`change`) and the record of the version: run
   * in order they leave the database exactly as `migrate()` does, so `migrate()` afterwards applies
   * nothing. Every statement is idempotent except a `change` that has `appliedIf`: run a step
   * through `applyMigrationStep`, which checks it.
   */
  readonly statements: readonly string[];
  /** The version's own statements. */
  readonly change: readonly string[];
  /**
   * For a version no statement can make idempotent (a column rename): a SELECT that returns a row
   * once its change is in place.
   */
  readonly appliedIf?: string;
}

/** Every schema version under `prefix` (validated), oldest first, for applying through another migration runner. */
export function migrationSteps(prefix: string): MigrationStep[] {
  const p = validatePrefix(prefix);
  return MIGRATIONS.map((m) => ({
    version: m.version,
    name: m.name,
    id: `${String(m.version).padStart(4, '0')}_${m.name}`,
    statements: [migrationsTableSql(p), ...m.statements(p), recordVersionSql(p, m)],
    change: m.statements(p),
    ...(m.appliedIf ? { appliedIf: m.appliedIf(p) } : {}),
  }));
}

/**
 * Applies one step through another migration runner's connection: `run` executes one statement
 * and resolves to its rows (none for DDL). Safe to run again after a crash, a rollback of the
 * runner's records, or from two processes: a change that is already in place (`appliedIf`) is
 * skipped, and a change that fails because another process made it meanwhile counts as applied.
 */
export async function applyMigrationStep(step: MigrationStep, run: (sql: string) => Promise<readonly unknown[]>): Promise<void> {
  const [setup, record] = [step.statements[0]!, step.statements[step.statements.length - 1]!];
  await run(setup);
  await applyChange(step.change, step.appliedIf, run);
  await run(record);
}
