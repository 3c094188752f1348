export { taskrow } from './factory.js';
export { kyselyClient } from './client.js';
export { describeKyselyError, isDriverError } from './errors.js';
export {
  taskrowMigrationProvider,
  type TaskrowMigration,
  type TaskrowMigrationProvider,
  type TaskrowMigrationProviderOptions,
} from './migrations.js';
export {
  TASKROW_COLUMNS,
  LOOP_TABLE_COLUMNS,
  type TaskrowDatabase,
  type TaskrowLoopTables,
  type TaskrowTables,
  type UtcDateTime,
  type SchemaMigrationsTable,
  type DonesNsTable,
  type DonesGenTable,
  type DonesTable,
  type LoopsTable,
  type LoopTable,
  type QueueJobsTable,
  type ResourcesTable,
  type ResourceLocksTable,
  type ResourceJobsTable,
  type ResourceEdgesTable,
  type ReceiptsTable,
  type QueueDeadKeysTable,
  type QueueDedupTable,
  type QueuesTable,
  type QueueKeysTable,
  type QueueRateSlotsTable,
  type QueueSchedulesTable,
} from './tables.js';
