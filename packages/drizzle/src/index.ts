export { taskrow } from './factory.js';
export {
  drizzleClient,
  drizzleTransactionClient,
  mysql2ClientClosed,
  type DrizzleDatabase,
  type DrizzleExecutor,
  type DrizzleTransaction,
} from './client.js';
export { describeDrizzleError, driverErrorOf } from './errors.js';
export { placeholderPositions, toDrizzleSql } from './statement.js';
export { taskrowMigrationFiles, writeTaskrowMigrations, type TaskrowMigrationFile, type TaskrowMigrationFilesOptions } from './migrations.js';
