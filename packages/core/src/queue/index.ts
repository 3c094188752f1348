/** The Queue's public surface, re-exported whole by the package index. */
export { LeaseLostError, UnrecoverableError } from './errors.js';
export { MAX_PAYLOAD_BYTES } from './payload.js';
export { MAX_LIST } from './list.js';
export { STATE_OF as JOB_STATES } from './tables.js';
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
  Queue,
  QueueOptions,
  QueueStats,
} from './types.js';
export type { JobContext, JobHandler, StopResult, QueueWorker, WorkerCounts, WorkerOptions } from './worker-types.js';
export { CHANNELS as WORKER_CHANNELS, type WorkerEventMap, type WorkerLogger } from './worker-events.js';
