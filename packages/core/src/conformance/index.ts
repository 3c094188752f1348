export { describeConformance } from './all.js';
export { describeDonesConformance } from './dones/index.js';
export { useSession, type SuiteContext } from './session.js';
export {
  dropPrefix,
  freshName,
  targetLabel,
  type ConformanceHarness,
  type ConformanceTarget,
  type HarnessSession,
  type Probe,
} from './harness.js';
