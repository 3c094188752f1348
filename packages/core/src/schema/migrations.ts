import { MAX_KEY_BYTES } from '../keys.js';
import { TABLE_OPTIONS, type Tables } from './tables.js';

/** One schema version: idempotent statements (safe to run twice, and from two processes at once). */
export interface Migration {
  readonly version: number;
  readonly name: string;
  statements(t: Tables): string[];
}

/** The record of applied versions; created before anything else. */
export function migrationsTableSql(t: Tables): string {
  return `CREATE TABLE IF NOT EXISTS ${t.migrations} (
  \`version\` INT UNSIGNED NOT NULL,
  \`name\` VARCHAR(128) NOT NULL,
  \`applied_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (\`version\`)
) ${TABLE_OPTIONS}`;
}

/** Every version, in order. New versions are appended, never edited. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'dones',
    statements: (t) => [
      `CREATE TABLE IF NOT EXISTS ${t.donesNs} (
  \`name\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  \`gen\` BIGINT UNSIGNED NOT NULL COMMENT 'current generation; clear() moves the namespace to a new one',
  \`created_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (\`name\`),
  UNIQUE KEY \`gen\` (\`gen\`)
) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS ${t.donesGen} (
  \`gen\` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  \`ns\` VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  \`retired_at\` DATETIME(6) NULL COMMENT 'UTC; set by clear(), the rows of a retired generation are purged in the background',
  PRIMARY KEY (\`gen\`),
  KEY \`retired_at\` (\`retired_at\`)
) ${TABLE_OPTIONS}`,
      `CREATE TABLE IF NOT EXISTS ${t.dones} (
  \`gen\` BIGINT UNSIGNED NOT NULL,
  \`h\` BINARY(16) NOT NULL COMMENT 'first 16 bytes of SHA-256 of the key',
  \`k\` VARBINARY(${MAX_KEY_BYTES}) NOT NULL COMMENT 'the key, UTF-8 bytes, exact',
  \`marked_at\` DATETIME(6) NOT NULL COMMENT 'UTC',
  PRIMARY KEY (\`gen\`, \`h\`)
) ${TABLE_OPTIONS}`,
    ],
  },
];

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
