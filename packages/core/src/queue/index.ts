/** The Queue's public surface, re-exported whole by the package index. */
export { LeaseLostError, UnrecoverableError } from './model/errors.js';
export { MAX_PAYLOAD_BYTES } from './model/payload.js';
export { ENQUEUE_LIMITS } from './model/options.js';
export { MAX_LIST } from './admin/list.js';
export { STATE_OF as JOB_STATES } from './model/tables.js';
export type {
  ClaimOptions,
  Enqueued,
  EnqueueItem,
  EnqueueOptions,
  FailOutcome,
  Job,
  JobFields,
  JobInfo,
  JobOutcome,
  JobPage,
  QueueListOptions,
  JobRef,
  JobState,
  QueueOptions,
  RetentionOptions,
  QueueStats,
} from './model/types.js';
export type { Queue } from './model/queue.js';
export type { JobContext, JobHandler, StopResult, QueueWorker, WorkerCounts, WorkerOptions } from './model/worker-types.js';
export { CHANNELS as WORKER_CHANNELS, type WorkerEventMap, type WorkerLogger } from './model/events.js';
