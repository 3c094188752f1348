import type { Migration } from './migration.js';
import { BASELINE } from './baseline/index.js';
import { table, TABLE_OPTIONS } from '../tables.js';

export type { Migration } from './migration.js';

/** The record of applied versions; created before anything else. */
export function migrationsTableSql(prefix: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table(prefix, 'schema_migrations')} (
  \`version\` INT UNSIGNED NOT NULL,
  \`name\` VARCHAR(128) NOT NULL,
  \`applied_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  \`min_build\` INT UNSIGNED NOT NULL DEFAULT 1 COMMENT 'the oldest schema version a build must know to use this schema',
  PRIMARY KEY (\`version\`)
) ${TABLE_OPTIONS}`;
}

/**
 * Every schema version, in order: the baseline (version 1), then each later change of a table or
 * index, appended and never edited. Stored procedures are not versions: `migrate()` installs them
 * by content after the tables (see `queue/routines`).
 */
export const MIGRATIONS: readonly Migration[] = [BASELINE];

/** The oldest schema version a build must know to use a schema with `m` applied (see `Migration.breaksOlderBuilds`). */
export const minBuildOf = (m: Migration): number => (m.breaksOlderBuilds ? m.version : 1);

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
