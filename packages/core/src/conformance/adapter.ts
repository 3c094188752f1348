import { describe } from 'vitest';
import { targetLabel, type ConformanceHarness, type ConformanceTarget } from './harness.js';
import { useSession, type SuiteContext } from './session.js';
import { donesClear } from './dones/clear.js';
import { donesConcurrency } from './dones/concurrency.js';
import { donesFailures } from './dones/failures.js';
import { donesTransactions } from './dones/transactions.js';
import { loopCreate } from './loop/create.js';
import { loopDryRun } from './loop/dryrun.js';
import { loopTransactions } from './loop/transactions.js';
import { queueConcurrency } from './queue/concurrency.js';
import { queueDoorbell } from './queue/doorbell.js';
import { queueHolding } from './queue/holding.js';
import { queueLeases } from './queue/leases.js';
import { queueTransactions } from './queue/transactions.js';
import { resourcesAdmin } from './resources/admin.js';
import { resourcesBadInput } from './resources/bad-input.js';
import { resourcesConcurrency } from './resources/concurrency.js';
import { resourcesHolding } from './resources/holding.js';
import { scheduleCrud } from './schedule/crud.js';

type Suite = <Tx>(ctx: () => SuiteContext<Tx>) => void;

/**
 * The kit's suites that reach an adapter through more than the engine's statements on its pool,
 * each under the name it has in the full kit:
 * - the driver's own transaction joined with `in(tx)`: commit, rollback, a savepoint (loop dry run),
 *   DDL refused inside it (loop create), a held row lock (dones clear, queue holding leases);
 * - a client killed by the server or ended by the application: lost and closed errors (dones
 *   failures, queue leases, resources bad input);
 * - statements aborted or interrupted on a lent connection: heartbeats that cannot be confirmed
 *   (queue and resources holding leases), a worker's sleep ended by `KILL QUERY` (queue doorbell);
 * - many single-connection clients racing on the same rows: deadlocks and lock waits retried
 *   through the adapter's errors (dones, queue and resources concurrency).
 * The rest of the kit is the engine's SQL over the same `SqlClient` calls; a reference adapter
 * runs it whole. A suite added to the kit that reaches the adapter in one of these ways belongs here.
 */
const ADAPTER_SUITES: Readonly<Record<string, readonly (readonly [string, Suite])[]>> = {
  dones: [
    ['clear', donesClear],
    ['application transactions', donesTransactions],
    ['concurrency', donesConcurrency],
    ['failures', donesFailures],
  ],
  loop: [
    ['create and registry', loopCreate],
    ['dry run', loopDryRun],
    ['application transactions', loopTransactions],
  ],
  queue: [
    ['leases and fencing', queueLeases],
    ['application transactions', queueTransactions],
    ['holding leases', queueHolding],
    ['doorbell', queueDoorbell],
    ['concurrency', queueConcurrency],
  ],
  resources: [
    ['holding leases', resourcesHolding],
    ['admin', resourcesAdmin],
    ['bad input', resourcesBadInput],
    ['concurrency', resourcesConcurrency],
  ],
  schedule: [['upsert, get, list and remove', scheduleCrud]],
};

/**
 * Registers the adapter's part of the kit (`ADAPTER_SUITES`) for every target of `harness`, under
 * the same describe names as the full kit: `<engine> <major.minor> · <adapter> · <primitive>`.
 */
export function describeAdapterConformance<Tx>(harness: ConformanceHarness<Tx>): void {
  for (const [primitive, suites] of Object.entries(ADAPTER_SUITES)) {
    for (const target of harness.targets) describePrimitive(harness, target, primitive, suites);
  }
}

function describePrimitive<Tx>(
  harness: ConformanceHarness<Tx>,
  target: ConformanceTarget,
  primitive: string,
  suites: readonly (readonly [string, Suite])[],
): void {
  describe(`${targetLabel(target)} · ${harness.adapter} · ${primitive}`, () => {
    const ctx = useSession(harness, target);
    for (const [name, suite] of suites) describe(name, () => suite(ctx));
  });
}
