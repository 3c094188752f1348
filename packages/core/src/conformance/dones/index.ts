import { describe } from 'vitest';
import { targetLabel, type ConformanceHarness } from '../harness.js';
import { useSession } from '../session.js';
import { donesBasics } from './basics.js';
import { donesClear } from './clear.js';
import { donesConcurrency } from './concurrency.js';
import { donesFailures } from './failures.js';
import { donesKeys } from './keys.js';
import { donesPending } from './pending.js';
import { donesTransactions } from './transactions.js';

/**
 * Registers the Dones conformance suites for every target of `harness`: one describe block per
 * server, named `<engine> <major.minor> · <adapter> · dones`, with its own tables.
 */
export function describeDonesConformance<Tx>(harness: ConformanceHarness<Tx>): void {
  for (const target of harness.targets) {
    describe(`${targetLabel(target)} · ${harness.adapter} · dones`, () => {
      const ctx = useSession(harness, target);
      describe('basics', () => donesBasics(ctx));
      describe('keys and names', () => donesKeys(ctx));
      describe('pending', () => donesPending(ctx));
      describe('clear', () => donesClear(ctx));
      describe('application transactions', () => donesTransactions(ctx));
      describe('concurrency', () => donesConcurrency(ctx));
      describe('failures', () => donesFailures(ctx));
    });
  }
}
