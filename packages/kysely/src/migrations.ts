import { sql, type Kysely } from 'kysely';
import { applyMigrationStep, migrationSteps } from '@taskrow/core';

/** Options of `taskrowMigrationProvider`. */
export interface TaskrowMigrationProviderOptions {
  /** The table prefix your taskrow uses (the `prefix` option of `taskrow()`). Default `taskrow_`. */
  readonly prefix?: string;
}

/**
 * One migration in the shape Kysely's `Migrator` runs. Typed structurally (not as Kysely's
 * `Migration`) because Kysely 0.29 moved its migration types from `kysely` to `kysely/migration`;
 * this shape is assignable to both.
 */
export interface TaskrowMigration {
  // biome-ignore lint/suspicious/noExplicitAny: any database type is accepted
  up(db: Kysely<any>): Promise<void>;
}

/** A Kysely `MigrationProvider` (0.28 and 0.29), typed structurally like `TaskrowMigration`. */
export interface TaskrowMigrationProvider {
  getMigrations(): Promise<Record<string, TaskrowMigration>>;
}

/**
 * taskrow's schema as a Kysely `MigrationProvider`, for `new Migrator({ db, provider })`. Each
 * schema version is one migration named `<prefix><version>_<name>` (`taskrow_0001_baseline`, so
 * Kysely's name order is version order) whose `up` runs exactly the statements core's `migrate()`
 * runs: the tables are identical and a later `tr.migrate()` applies nothing. Running a step twice
 * changes nothing (`applyMigrationStep`).
 *
 * There is no `down`: migrating down MUST NOT drop taskrow's tables or rows (taskrow never drops
 * data), so Kysely skips these migrations then; drop the tables by hand if you mean to.
 *
 * Give taskrow its own `migrationTableName` and `migrationLockTableName` (say
 * `taskrow_kysely_migration`), or merge this provider's migrations with yours: Kysely refuses to
 * run when a migration it recorded is missing from the provider.
 */
export function taskrowMigrationProvider(options: TaskrowMigrationProviderOptions = {}): TaskrowMigrationProvider {
  const prefix = options.prefix ?? 'taskrow_';
  const steps = migrationSteps(prefix); // validates the prefix now, not when Kysely runs
  const migrations: Record<string, TaskrowMigration> = {};
  for (const step of steps) {
    migrations[`${prefix}${step.id}`] = {
      // biome-ignore lint/suspicious/noExplicitAny: any database type is accepted
      async up(db: Kysely<any>) {
        await applyMigrationStep(step, async (statement) => (await sql.raw(statement).execute(db)).rows);
      },
    };
  }
  return { getMigrations: async () => migrations };
}
