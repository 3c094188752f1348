// Type-checked under moduleResolution bundler, with Kysely's own Migrator (0.28 or 0.29).
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { TaskrowError } from '@taskrow/core';
import { taskrow } from '@taskrow/mysql2';
import { taskrowMigrationProvider, type TaskrowDatabase } from '@taskrow/kysely';

export const migrator = (db: Kysely<TaskrowDatabase>): Migrator => new Migrator({ db, provider: taskrowMigrationProvider() });
export const fns = [taskrow, TaskrowError] as const;
