import { applyMigrationStep, migrationSteps } from '@taskrow/core';

/** Options of `taskrowMigrations`. */
export interface TaskrowMigrationsOptions {
  /** The table prefix your taskrow uses (the `prefix` option of `taskrow()`). Default `taskrow_`. */
  readonly prefix?: string;
}

/** What an Umzug migration's `up` receives as `context`: a Sequelize instance or its QueryInterface. */
export type TaskrowMigrationContext = { query(sql: string): Promise<unknown> } | { readonly sequelize: { query(sql: string): Promise<unknown> } };

/** One taskrow schema version as an Umzug migration (`RunnableMigration`), typed structurally. */
export interface TaskrowMigration {
  readonly name: string;
  up(params: { context: TaskrowMigrationContext }): Promise<void>;
  down(): Promise<void>;
}

/** The Sequelize instance behind a migration context. */
function sequelizeOf(context: TaskrowMigrationContext): { query(sql: string): Promise<unknown> } {
  return 'sequelize' in context && typeof context.sequelize?.query === 'function' ? context.sequelize : (context as { query(sql: string): Promise<unknown> });
}

/** The rows of one statement through `sequelize.query()`, which resolves to `[results, metadata]` (results: the rows of a SELECT). */
async function rowsOf(db: { query(sql: string): Promise<unknown> }, sql: string): Promise<readonly unknown[]> {
  const answer = await db.query(sql);
  const results = Array.isArray(answer) ? answer[0] : undefined;
  return Array.isArray(results) ? results : [];
}

/**
 * taskrow's schema as Umzug migrations, for `new Umzug({ migrations: taskrowMigrations(), context,
 * storage: new SequelizeStorage({ sequelize, tableName }) })` with `context` the Sequelize instance
 * or `sequelize.getQueryInterface()` (sequelize-cli's convention). Each schema version is one
 * migration named `<prefix><version>_<name>` (`taskrow_0001_baseline`) whose `up` runs exactly the
 * statements core's `migrate()` runs, through `sequelize.query()` and core's `applyMigrationStep`
 * (which skips a change that cannot be re-run, such as a column rename, once it is in place), so
 * the tables are identical, a later `tr.migrate()` applies nothing, and a re-run changes nothing.
 *
 * `down` MUST NOT drop anything: it leaves taskrow's tables and rows in place (taskrow never drops
 * data); drop them by hand if you mean to.
 */
export function taskrowMigrations(options: TaskrowMigrationsOptions = {}): TaskrowMigration[] {
  const prefix = options.prefix ?? 'taskrow_';
  return migrationSteps(prefix).map((step) => ({
    name: `${prefix}${step.id}`,
    async up({ context }) {
      const db = sequelizeOf(context);
      await applyMigrationStep(step, (sql) => rowsOf(db, sql));
    },
    async down() {
      // Deliberately nothing: see above.
    },
  }));
}
