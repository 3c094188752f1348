import { describe } from 'vitest';
import { targetLabel, type ConformanceHarness } from '../harness.js';
import { useSession } from '../session.js';
import { loopBasics } from './basics.js';
import { loopBump } from './bump.js';
import { loopConcurrency } from './concurrency.js';
import { loopCreate } from './create.js';
import { loopDryRun } from './dryrun.js';
import { loopGet } from './get.js';
import { loopIds } from './ids.js';
import { loopInput } from './input.js';
import { loopStats } from './stats.js';
import { loopTransactions } from './transactions.js';

/**
 * Registers the Loop conformance suites for every target of `harness`: one describe block per
 * server, named `<engine> <major.minor> · <adapter> · loop`, with its own tables.
 */
export function describeLoopConformance<Tx>(harness: ConformanceHarness<Tx>): void {
  for (const target of harness.targets) {
    describe(`${targetLabel(target)} · ${harness.adapter} · loop`, () => {
      const ctx = useSession(harness, target);
      describe('create and registry', () => loopCreate(ctx));
      describe('add, remove, did, unlock, check', () => loopBasics(ctx));
      describe('get', () => loopGet(ctx));
      describe('bump', () => loopBump(ctx));
      describe('stats', () => loopStats(ctx));
      describe('ids', () => loopIds(ctx));
      describe('dry run', () => loopDryRun(ctx));
      describe('bad input', () => loopInput(ctx));
      describe('application transactions', () => loopTransactions(ctx));
      describe('concurrency', () => loopConcurrency(ctx));
    });
  }
}
