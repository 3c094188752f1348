export { describeDonesConformance } from './dones/index.js';
export {
  dropPrefix,
  freshName,
  targetLabel,
  type ConformanceHarness,
  type ConformanceTarget,
  type HarnessSession,
  type Probe,
} from './harness.js';
