import { describe } from 'vitest';
import { targetLabel, type ConformanceHarness } from '../harness.js';
import { useSession } from '../session.js';
import { resourcesAdmin } from './admin.js';
import { resourcesBadInput } from './bad-input.js';
import { resourcesBasics } from './basics.js';
import { resourcesConcurrency } from './concurrency.js';
import { resourcesHistory } from './history.js';
import { resourcesHolding } from './holding.js';
import { resourcesLeases } from './leases.js';
import { resourcesScoped } from './scoped.js';

/**
 * Registers the Resources conformance suites for every target of `harness`: one describe block
 * per server, named `<engine> <major.minor> · <adapter> · resources`, with its own tables.
 */
export function describeResourcesConformance<Tx>(harness: ConformanceHarness<Tx>): void {
  for (const target of harness.targets) {
    describe(`${targetLabel(target)} · ${harness.adapter} · resources`, () => {
      const ctx = useSession(harness, target);
      describe('rules', () => resourcesBasics(ctx));
      describe('waits and leases', () => resourcesLeases(ctx));
      describe('holding leases', () => resourcesHolding(ctx));
      describe('scoped runs and shutdown', () => resourcesScoped(ctx));
      describe('flow history', () => resourcesHistory(ctx));
      describe('admin', () => resourcesAdmin(ctx));
      describe('bad input', () => resourcesBadInput(ctx));
      describe('concurrency', () => resourcesConcurrency(ctx));
    });
  }
}
