// Type-checked as a CommonJS module under node16 and nodenext (imports compile to require()).
import { TaskrowError, type Taskrow } from '@taskrow/core';
import { taskrow, type Mysql2Input } from '@taskrow/mysql2';
import { taskrow as mariadbTaskrow } from '@taskrow/mariadb';
import { taskrow as knexTaskrow } from '@taskrow/knex';
import { taskrowMigrationProvider } from '@taskrow/kysely';
import { taskrow as drizzleTaskrow, type DrizzleTransaction } from '@taskrow/drizzle';
import { taskrow as sequelizeTaskrow, taskrowMigrations as sequelizeMigrations, type SequelizeTransaction } from '@taskrow/sequelize';
import { taskrow as typeormTaskrow, taskrowMigrations as typeormMigrations, type TypeormTransaction } from '@taskrow/typeorm';
import { startServer } from '@taskrow/servers';
import { main } from '@taskrow/cli';

export async function open(pool: Mysql2Input): Promise<Taskrow<unknown>> {
  return taskrow(pool);
}
export const isTaskrowError = (e: unknown): e is TaskrowError => e instanceof TaskrowError;
export const fns = [mariadbTaskrow, knexTaskrow, drizzleTaskrow, sequelizeTaskrow, sequelizeMigrations, typeormTaskrow, typeormMigrations, startServer, main, taskrowMigrationProvider] as const;
export type DrizzleTx = DrizzleTransaction;
export type SequelizeTx = SequelizeTransaction;
export type TypeormTx = TypeormTransaction;
