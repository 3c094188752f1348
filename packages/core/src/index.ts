export { createTaskrow, type Taskrow, type TaskrowOptions, type TaskrowSetup } from './taskrow.js';
export type { Dones, DoneEntry, DonePage, PurgeMode } from './dones/types.js';
export type { SqlClient, SqlConnection, SqlResult, SqlValue, DriverErrorInfo, IsolationLevel } from './port.js';
export { dialectFromVersion, type Dialect } from './dialect.js';
export {
  TaskrowError,
  InvalidArgumentError,
  UnsupportedServerError,
  DatabaseError,
  type TaskrowErrorCode,
} from './errors.js';
export { classify, DEFAULT_RETRY, type ErrorClass, type RetryOptions } from './retry.js';
export { NAME_PATTERN, TABLE_NAME_PATTERN, PREFIX_PATTERN, validateName } from './names.js';
export { MAX_KEY_BYTES, encodeKey } from './keys.js';
export { SCHEMA_VERSION, MIGRATIONS } from './schema/migrations.js';
export { serialClient } from './serial.js';
