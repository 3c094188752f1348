import type { ConformanceHarness } from './harness.js';
import { describeAdapterConformance } from './adapter.js';
import { describeDonesConformance } from './dones/index.js';
import { describeLoopConformance } from './loop/index.js';
import { describeQueueConformance } from './queue/index.js';
import { describeResourcesConformance } from './resources/index.js';
import { describeScheduleConformance } from './schedule/index.js';

/** What `describeConformance` registers. */
export interface ConformanceOptions {
  /**
   * `full` (the default): every case of every primitive, for a reference adapter and for any
   * adapter tested on its own. `adapter`: only the suites that reach the adapter through more than
   * the engine's statements on its pool (its driver's transactions joined with `in(tx)`, killed and
   * ended clients, many clients racing, workers and rings whose connections are lost or
   * interrupted: see `adapter.ts`), for an adapter whose engine paths a reference adapter already
   * runs whole on the same servers.
   */
  readonly scope?: 'full' | 'adapter';
}

/**
 * Registers every primitive's conformance suites for `harness`. Adapters call this one function,
 * so a primitive added to the kit runs on every adapter and every server.
 */
export function describeConformance<Tx>(harness: ConformanceHarness<Tx>, options: ConformanceOptions = {}): void {
  if (options.scope === 'adapter') {
    describeAdapterConformance(harness);
    return;
  }
  describeDonesConformance(harness);
  describeLoopConformance(harness);
  describeQueueConformance(harness);
  describeResourcesConformance(harness);
  describeScheduleConformance(harness);
}
