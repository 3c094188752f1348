import type { ConformanceHarness } from './harness.js';
import { describeDonesConformance } from './dones/index.js';
import { describeLoopConformance } from './loop/index.js';
import { describeQueueConformance } from './queue/index.js';
import { describeResourcesConformance } from './resources/index.js';
import { describeScheduleConformance } from './schedule/index.js';

/**
 * Registers every primitive's conformance suites for `harness`. Adapters call this one function,
 * so a primitive added to the kit runs on every adapter and every server.
 */
export function describeConformance<Tx>(harness: ConformanceHarness<Tx>): void {
  describeDonesConformance(harness);
  describeLoopConformance(harness);
  describeQueueConformance(harness);
  describeResourcesConformance(harness);
  describeScheduleConformance(harness);
}
