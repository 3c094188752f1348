import { describe } from 'vitest';
import { targetLabel, type ConformanceHarness } from '../harness.js';
import { useSession } from '../session.js';
import { scheduleCrud } from './crud.js';
import { scheduleMissed } from './missed.js';
import { scheduleTicks } from './ticks.js';

/**
 * Registers the recurring-schedule suites for every target of `harness`: one describe block per
 * server, named `<engine> <major.minor> · <adapter> · schedule`, with its own tables. Time is moved
 * by writing `next_at` through the probe; one case watches real 1-second ticks.
 */
export function describeScheduleConformance<Tx>(harness: ConformanceHarness<Tx>): void {
  for (const target of harness.targets) {
    describe(`${targetLabel(target)} · ${harness.adapter} · schedule`, () => {
      const ctx = useSession(harness, target);
      describe('upsert, get, list and remove', () => scheduleCrud(ctx));
      describe('one job per tick', () => scheduleTicks(ctx));
      describe('missed ticks', () => scheduleMissed(ctx));
    });
  }
}
