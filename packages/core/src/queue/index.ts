export { createQueue } from './queue.js';
export { QUEUE_MIGRATION } from './schema.js';
export { queueTables, type QueueTables } from './tables.js';
export { LeaseLostError } from './errors.js';
export { MAX_PAYLOAD_BYTES } from './payload.js';
export { MAX_LIST } from './list.js';
export type {
  ClaimOptions,
  Enqueued,
  EnqueueItem,
  EnqueueOptions,
  FailOutcome,
  Job,
  JobFields,
  JobInfo,
  JobPage,
  ListOptions,
  JobRef,
  JobState,
  Queue,
  QueueOptions,
  QueueStats,
} from './types.js';
export type { JobContext, JobHandler, StopResult, QueueWorker, WorkerCounts, WorkerOptions } from './worker-types.js';
