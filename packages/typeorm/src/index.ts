export { taskrow } from './factory.js';
export {
  runnerOf,
  typeormClient,
  typeormTransactionClient,
  type TypeormDataSource,
  type TypeormManager,
  type TypeormQueryRunner,
  type TypeormTransaction,
} from './client.js';
export { describeTypeormError, driverErrorOf } from './errors.js';
export { taskrowMigrations, type TaskrowMigration, type TaskrowMigrationsOptions } from './migrations.js';
