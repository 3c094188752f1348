import { afterAll, beforeAll } from 'vitest';
import { dropPrefix, freshName, type ConformanceHarness, type ConformanceTarget, type HarnessSession } from './harness.js';

/** A session opened before a suite's tests and closed (tables dropped) after them. */
export interface SuiteContext<Tx> {
  readonly target: ConformanceTarget;
  readonly prefix: string;
  readonly session: HarnessSession<Tx>;
  /** A fresh taskrow session on the same target and prefix, for tests that break their client. */
  openExtra(): Promise<HarnessSession<Tx>>;
}

/** Registers beforeAll / afterAll for one target and returns a getter for the open session. */
export function useSession<Tx>(harness: ConformanceHarness<Tx>, target: ConformanceTarget): () => SuiteContext<Tx> {
  const prefix = `${freshName('c')}_`;
  let ctx: SuiteContext<Tx> | undefined;
  const extras: HarnessSession<Tx>[] = [];
  beforeAll(async () => {
    const session = await harness.open(target, { prefix });
    await session.taskrow.migrate();
    ctx = {
      target,
      prefix,
      session,
      openExtra: async () => {
        const s = await harness.open(target, { prefix });
        extras.push(s);
        return s;
      },
    };
  });
  afterAll(async () => {
    if (!ctx) return;
    await ctx.session.taskrow.close().catch(() => undefined);
    await dropPrefix(ctx.session.probe, prefix);
    await Promise.allSettled(extras.map((s) => s.close()));
    await ctx.session.close();
  });
  return () => {
    if (!ctx) throw new Error('the conformance session did not open (see the beforeAll error)');
    return ctx;
  };
}
