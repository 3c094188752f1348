// Compile-time check (tsc, not vitest): the migration provider is a Kysely 0.28 MigrationProvider.
import { Migrator, type Kysely, type MigrationProvider } from 'kysely';
import { taskrowMigrationProvider, type TaskrowDatabase } from '../../src/index.js';

export const provider: MigrationProvider = taskrowMigrationProvider();
export const migrator = (db: Kysely<TaskrowDatabase>): Migrator => new Migrator({ db, provider: taskrowMigrationProvider() });
