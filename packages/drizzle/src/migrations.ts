import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { migrationSteps } from '@taskrow/core';

/** Options of `taskrowMigrationFiles` and `writeTaskrowMigrations`. */
export interface TaskrowMigrationFilesOptions {
  /** The table prefix your taskrow uses (the `prefix` option of `taskrow()`). Default `taskrow_`. */
  readonly prefix?: string;
}

/** One file of a drizzle-kit migrations folder: its path inside the folder and its text. */
export interface TaskrowMigrationFile {
  readonly path: string;
  readonly contents: string;
}

/** drizzle-kit separates the statements of one migration file with this line. */
const BREAKPOINT = '\n--> statement-breakpoint\n';

/**
 * The `when` of a schema version in the journal. Drizzle's migrator applies every migration whose
 * `when` is later than the last one it recorded, so each version gets a fixed, increasing instant:
 * a folder written again (or by a later taskrow with more versions) names the same versions the same.
 */
const whenOf = (version: number): number => Date.UTC(2026, 0, 1) + version * 1000;

/**
 * taskrow's schema as a drizzle-kit migrations folder: one `<prefix><version>_<name>.sql` per
 * schema version (`taskrow_0001_baseline.sql`) holding exactly the table statements core's `migrate()` runs,
 * separated by drizzle-kit's `--> statement-breakpoint`, and the `meta/_journal.json` that lists
 * them. Drizzle's migrator (`migrate(db, { migrationsFolder })` from `drizzle-orm/mysql2/migrator`)
 * and `drizzle-kit migrate` apply it; `tr.migrate()` afterwards applies nothing. Every statement is
 * idempotent except version 7's column rename, which a file cannot guard (core's `applyMigrationStep`
 * does that for runners that run code): apply the folder to a database whose taskrow tables are older
 * than version 7 or absent, not after `tr.migrate()` already took them past it. There is no down
 * migration: taskrow never drops data.
 *
 * Keep the folder apart from your own drizzle-kit folder and give it its own `migrationsTable`
 * (say `taskrow_drizzle_migrations`): Drizzle's migrator only compares against the last migration
 * it recorded in its table.
 */
export function taskrowMigrationFiles(options: TaskrowMigrationFilesOptions = {}): TaskrowMigrationFile[] {
  const prefix = options.prefix ?? 'taskrow_';
  const steps = migrationSteps(prefix); // validates the prefix
  const entries = steps.map((step, idx) => ({ idx, version: '5', when: whenOf(step.version), tag: `${prefix}${step.id}`, breakpoints: true }));
  const journal = { version: '7', dialect: 'mysql', entries };
  return [
    ...steps.map((step, i) => ({ path: `${entries[i]!.tag}.sql`, contents: `${step.statements.join(`;${BREAKPOINT}`)};\n` })),
    { path: 'meta/_journal.json', contents: `${JSON.stringify(journal, null, 2)}\n` },
  ];
}

/**
 * Writes `taskrowMigrationFiles(options)` into the folder `out` (created if missing; taskrow's files
 * in it are overwritten, nothing else is touched) and returns the paths written. Run it once when
 * you add or upgrade taskrow, and commit the folder like any drizzle-kit output.
 */
export function writeTaskrowMigrations(out: string, options: TaskrowMigrationFilesOptions = {}): string[] {
  return taskrowMigrationFiles(options).map((file) => {
    const path = join(out, file.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.contents);
    return path;
  });
}
