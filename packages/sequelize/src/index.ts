export { taskrow, type SequelizeTransaction } from './factory.js';
export {
  connectionOf,
  sequelizeClient,
  sequelizeTransactionClient,
  type Mysql2CallbackConnection,
  type SequelizeConnectionManager,
  type SequelizeInstance,
} from './client.js';
export { describeSequelizeError, driverErrorOf, isPlainError } from './errors.js';
export { taskrowMigrations, type TaskrowMigration, type TaskrowMigrationContext, type TaskrowMigrationsOptions } from './migrations.js';
