/** The recurring schedules' public surface, re-exported whole by the package index. */
export { MAX_MISSED_EACH, MAX_EVERY_MS } from './spec.js';
export type { MissedPolicy, ScheduleInfo, ScheduleJobOptions, Scheduler, SchedulerOptions, Schedules, ScheduleSpec } from './types.js';
