export { describeConformance, type ConformanceOptions } from './all.js';
export { describeAdapterConformance } from './adapter.js';
export { describeDonesConformance } from './dones/index.js';
export { describeLoopConformance } from './loop/index.js';
export { describeQueueConformance } from './queue/index.js';
export { describeResourcesConformance } from './resources/index.js';
export { describeScheduleConformance } from './schedule/index.js';
export { useSession, type SuiteContext } from './session.js';
export { runningStatement } from './queue/probe.js';
export { until } from './queue/probe.js';
export {
  dropPrefix,
  freshName,
  targetLabel,
  type ConformanceHarness,
  type ConformanceTarget,
  type HarnessSession,
  type Probe,
} from './harness.js';
