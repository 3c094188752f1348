export { createInspect } from './inspect.js';
export { MAX_INSPECT_PAGE, MAX_COUNT_LIMIT, DEFAULT_COUNT_LIMIT } from './args.js';
export type { Inspect, InspectPage, InspectPageOptions, QueueSummary, LoopSummary, DonesSummary, CappedCount } from './types.js';
