import { describe } from 'vitest';
import { targetLabel, type ConformanceHarness } from '../harness.js';
import { useSession } from '../session.js';
import { queueAcks } from './acks.js';
import { queueBadInput } from './bad-input.js';
import { queueClaim } from './claim.js';
import { queueConcurrency } from './concurrency.js';
import { queueDedup } from './dedup.js';
import { queueDoorbell } from './doorbell.js';
import { queueEnqueue } from './enqueue.js';
import { queueEvents } from './events.js';
import { queueFailNow } from './fail-now.js';
import { queueLeases } from './leases.js';
import { queueLimits } from './limits.js';
import { queueRate } from './rate.js';
import { queueList } from './list.js';
import { queuePause } from './pause.js';
import { queueResults } from './results.js';
import { queueMaintenance } from './maintenance.js';
import { queueHolding } from './holding.js';
import { queueStrict } from './strict.js';
import { queueTransactions } from './transactions.js';
import { queueWorker } from './worker.js';

/**
 * Registers the Queue conformance suites for every target of `harness`: one describe block per
 * server, named `<engine> <major.minor> · <adapter> · queue`, with its own tables. Time is moved by
 * writing `due_at` through the probe, never by sleeping.
 */
export function describeQueueConformance<Tx>(harness: ConformanceHarness<Tx>): void {
  for (const target of harness.targets) {
    describe(`${targetLabel(target)} · ${harness.adapter} · queue`, () => {
      const ctx = useSession(harness, target);
      describe('enqueue', () => queueEnqueue(ctx));
      describe('claim', () => queueClaim(ctx));
      describe('acks', () => queueAcks(ctx));
      describe('failing without retry', () => queueFailNow(ctx));
      describe('leases and fencing', () => queueLeases(ctx));
      describe('dedup', () => queueDedup(ctx));
      describe('dead jobs, retention and stats', () => queueMaintenance(ctx));
      describe('list and getJob', () => queueList(ctx));
      describe('bad input', () => queueBadInput(ctx));
      describe('strict options and payloads', () => queueStrict(ctx));
      describe('application transactions', () => queueTransactions(ctx));
      describe('worker', () => queueWorker(ctx));
      describe('events, logger and tracing', () => queueEvents(ctx));
      describe('pause and resume', () => queuePause(ctx));
      describe('results, progress and waitFor', () => queueResults(ctx));
      describe('per-key concurrency limits', () => queueLimits(ctx));
      describe('rate limits', () => queueRate(ctx));
      describe('holding leases', () => queueHolding(ctx));
      describe('doorbell', () => queueDoorbell(ctx));
      describe('concurrency', () => queueConcurrency(ctx));
    });
  }
}
