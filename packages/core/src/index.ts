export { createTaskrow, type Taskrow, type TaskrowOptions, type TaskrowSetup } from './taskrow.js';
export type { Dones, DoneEntry, DonePage, PurgeMode } from './dones/types.js';
export type {
  Loop,
  LoopId,
  LoopIdType,
  LoopIdOf,
  LoopIdInput,
  LoopOptions,
  CreateLoopOptions,
  LoopCheck,
  LoopStats,
  AddOptions as LoopAddOptions,
  GetOptions as LoopGetOptions,
  AutoAddOptions as LoopAutoAddOptions,
  BumpOptions as LoopBumpOptions,
  DryRunOption as LoopDryRunOption,
} from './loop/types.js';
export { MAX_LOOP_ID_BYTES } from './loop/ids.js';
export * from './queue/index.js';
export * from './schedule/index.js';
export * from './inspect/index.js';
export type { DoctorCheck, DoctorReport, DoctorStatus } from './doctor/index.js';
export type { SqlClient, SqlSession, SessionOptions, QueryOptions, SqlConnection, SqlResult, SqlValue, DriverErrorInfo, IsolationLevel } from './port.js';
export { dialectFromVersion, type Dialect } from './dialect.js';
export {
  TaskrowError,
  InvalidArgumentError,
  UnsupportedServerError,
  DatabaseError,
  type TaskrowErrorCode,
} from './errors.js';
export { classify, DEFAULT_RETRY, isInterrupted, type ErrorClass, type RetryOptions } from './retry.js';
export { NAME_PATTERN, TABLE_NAME_PATTERN, PREFIX_PATTERN, validateName } from './names.js';
export { MAX_KEY_BYTES, encodeKey } from './keys.js';
export { SCHEMA_VERSION, MIGRATIONS } from './schema/migrations.js';
export { applyMigrationStep, migrationSteps, schemaSql, type MigrationStep, type MigrateResult } from './schema/migrate.js';
export { serialClient } from './serial.js';
export { redactUrl } from './redact.js';
export { describeMysql2Error } from './engine/mysql-errors.js';
export {
  driverClient,
  lending,
  rollingBackInterrupted,
  toSqlResult,
  waitsOf,
  type EnqueueEmitter,
  type DriverClientSpec,
  type DriverConnection,
  type DriverPool,
  type DriverTarget,
  type Lender,
} from './engine/driver.js';
export { killingAbandoned, type Abandonable, type SessionKiller } from './engine/abandon.js';
export type {
  Resources,
  ResourcesOptions,
  ResourceJob,
  ResourceKey,
  ResourceJobOptions,
  AcquireOptions,
  ReleaseOptions,
  RunCheck,
  KeyReason,
  UnavailableReason,
  LostReason,
  RunningJob,
  FlowEdge,
  TraversedEdge,
  TimeWindow,
} from './resources/types.js';
export { ResourceUnavailableError, ResourceLockLostError } from './resources/errors.js';
export { dotted, dottedName, type DottedName } from './resources/names.js';
export { releaseAllHeld as releaseHeldResources } from './resources/shutdown.js';
