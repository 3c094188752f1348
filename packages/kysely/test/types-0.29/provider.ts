// Compile-time check against Kysely 0.29 (tsconfig.kysely-0.29.json maps `kysely` to the
// kysely-0.29 devDependency): 0.29 moved Migrator and MigrationProvider to `kysely/migration`.
import type { Kysely } from 'kysely';
import { Migrator, type MigrationProvider } from 'kysely/migration';
import { taskrowMigrationProvider, type TaskrowDatabase } from '../../src/index.js';

export const provider: MigrationProvider = taskrowMigrationProvider();
export const migrator = (db: Kysely<TaskrowDatabase>): Migrator => new Migrator({ db, provider: taskrowMigrationProvider() });
