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
// Not `toDrizzleSql` (statement.ts): its declaration names Drizzle's `SQL` class, which would load
// drizzle-orm's own declarations into every application that type-checks with skipLibCheck off.
export { placeholderPositions } from './placeholders.js';
export { taskrowMigrationFiles, writeTaskrowMigrations, type TaskrowMigrationFile, type TaskrowMigrationFilesOptions } from './migrations.js';
