import { applyMigrationStep, migrationSteps } from '@taskrow/core';

/** Options of `taskrowMigrations`. */
export interface TaskrowMigrationsOptions {
  /** The table prefix your taskrow uses (the `prefix` option of `taskrow()`). Default `taskrow_`. */
  readonly prefix?: string;
}

/** One taskrow schema version as a TypeORM migration (`MigrationInterface`), typed structurally. */
export interface TaskrowMigration {
  /** `<prefix><version>_<name>` followed by the 13-digit timestamp TypeORM orders migrations by. */
  readonly name: string;
  up(queryRunner: { query(query: string): Promise<unknown> }): Promise<void>;
  down(queryRunner: unknown): Promise<void>;
}

/**
 * The timestamp of a schema version in the migration's name: TypeORM orders every migration by the
 * last 13 digits of its name. Fixed per version, so the names never change and a later taskrow's
 * new versions sort after the old ones.
 */
const timestampOf = (version: number): number => Date.UTC(2026, 0, 1) + version * 1000;

/**
 * taskrow's schema as TypeORM migration classes, for the DataSource's `migrations` option
 * (`migrations: [...taskrowMigrations(), ...yours]`) and `dataSource.runMigrations()` or the
 * `typeorm migration:run` command. Each schema version is one class whose instances are named
 * `<prefix><version>_<name><timestamp>` (`taskrow_0001_baseline1767225601000`) and whose `up`
 * runs exactly the table statements core's `migrate()` runs through the QueryRunner and core's
 * `applyMigrationStep` (which skips a change that cannot be re-run, such as a column rename, once it
 * is in place), so the tables are identical, a later `tr.migrate()` applies nothing, and a re-run
 * changes nothing.
 *
 * `down` MUST NOT drop anything: it leaves taskrow's tables and rows in place (taskrow never drops
 * data), so `undoLastMigration()` only forgets the record; drop the tables by hand if you mean to.
 */
export function taskrowMigrations(options: TaskrowMigrationsOptions = {}): (new () => TaskrowMigration)[] {
  const prefix = options.prefix ?? 'taskrow_';
  return migrationSteps(prefix).map((step) => {
    const name = `${prefix}${step.id}${timestampOf(step.version)}`;
    const migration = class implements TaskrowMigration {
      readonly name = name;
      async up(queryRunner: { query(query: string): Promise<unknown> }): Promise<void> {
        // TypeORM's mysql QueryRunner resolves to mysql2's raw answer: the rows of a SELECT.
        await applyMigrationStep(step, async (sql) => {
          const answer = await queryRunner.query(sql);
          return Array.isArray(answer) ? answer : [];
        });
      }
      async down(): Promise<void> {
        // Deliberately nothing: see above.
      }
    };
    Object.defineProperty(migration, 'name', { value: `Taskrow${step.id.replace(/\W/g, '')}${timestampOf(step.version)}` });
    return migration;
  });
}
