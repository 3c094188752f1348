// Type-checked as an ES module under node16 and nodenext.
import { TaskrowError, type Taskrow, type TaskrowErrorCode } from '@taskrow/core';
import { taskrow, type Mysql2Input } from '@taskrow/mysql2';
import { taskrow as mariadbTaskrow } from '@taskrow/mariadb';
import { taskrow as knexTaskrow } from '@taskrow/knex';
import { taskrowMigrationProvider, type TaskrowDatabase } from '@taskrow/kysely';
import { taskrow as drizzleTaskrow, type DrizzleTransaction } from '@taskrow/drizzle';
import { taskrow as sequelizeTaskrow, taskrowMigrations as sequelizeMigrations, type SequelizeTransaction } from '@taskrow/sequelize';
import { taskrow as typeormTaskrow, taskrowMigrations as typeormMigrations, type TypeormTransaction } from '@taskrow/typeorm';
import { startServer } from '@taskrow/servers';
import { main } from '@taskrow/cli';

export async function open(pool: Mysql2Input): Promise<Taskrow<unknown>> {
  return taskrow(pool, { prefix: 'app_' });
}
export const code: TaskrowErrorCode | undefined = new TaskrowError('INVALID_ARGUMENT', 'x').code;
export const fns = [mariadbTaskrow, knexTaskrow, drizzleTaskrow, sequelizeTaskrow, sequelizeMigrations, typeormTaskrow, typeormMigrations, startServer, main, taskrowMigrationProvider] as const;
export type Tables = TaskrowDatabase;
export type DrizzleTx = DrizzleTransaction;
export type SequelizeTx = SequelizeTransaction;
export type TypeormTx = TypeormTransaction;
