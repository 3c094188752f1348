import type { Knex } from 'knex';
import { applyMigrationStep, migrationSteps, type MigrationStep } from '@taskrow/core';

/** Options of `taskrowMigrations`. */
export interface TaskrowMigrationsOptions {
  /** The table prefix your taskrow uses (the `prefix` option of `taskrow()`). Default `taskrow_`. */
  readonly prefix?: string;
}

/** One taskrow schema version as a Knex migration; `config.transaction: false` because MySQL DDL commits implicitly. */
interface KnexTaskrowMigration extends Knex.Migration {
  readonly config: { readonly transaction: false };
}

/**
 * taskrow's schema as a Knex migration source, for `knex.migrate.latest({ migrationSource })`.
 * Each schema version is one migration named `<prefix><version>_<name>` (`taskrow_0001_baseline`)
 * whose `up` runs exactly the table statements core's `migrate()` runs, so the tables are identical
 * and a later `tr.migrate()` applies nothing. Running a step again after a Knex rollback changes
 * nothing (`applyMigrationStep`).
 *
 * `down` MUST NOT drop anything: it leaves taskrow's tables and their rows in place (taskrow never
 * drops data); drop them by hand if you mean to.
 *
 * Give taskrow its own `tableName` (say `taskrow_knex_migrations`), or merge this source with your
 * own: Knex reports a migration recorded in its table but missing from the source as corrupt.
 */
export function taskrowMigrations(options: TaskrowMigrationsOptions = {}): Knex.MigrationSource<MigrationStep> {
  const prefix = options.prefix ?? 'taskrow_';
  const steps = migrationSteps(prefix); // validates the prefix now, not when Knex runs
  return {
    getMigrations: async () => steps,
    getMigrationName: (step) => `${prefix}${step.id}`,
    getMigration: async (step): Promise<KnexTaskrowMigration> => ({
      config: { transaction: false },
      async up(knex: Knex) {
        // No bindings: Knex passes the DDL through untouched. mysql2 answers [rows, fields].
        await applyMigrationStep(step, async (sql) => {
          const res: unknown = await knex.raw(sql);
          return Array.isArray(res) && Array.isArray(res[0]) ? (res[0] as unknown[]) : [];
        });
      },
      async down() {
        // Deliberately nothing: see above.
      },
    }),
  };
}
