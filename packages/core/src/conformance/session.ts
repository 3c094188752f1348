import { afterAll, beforeAll } from 'vitest';
import { dropPrefix, freshName, type ConformanceHarness, type ConformanceTarget, type HarnessSession } from './harness.js';

/** A session opened before a suite's tests and closed (tables dropped) after them. */
export interface SuiteContext<Tx> {
  readonly target: ConformanceTarget;
  readonly prefix: string;
  readonly session: HarnessSession<Tx>;
  /** A fresh taskrow session on the same target and prefix, for tests that break their client. */
  openExtra(options?: { oneNode?: boolean }): Promise<HarnessSession<Tx>>;
}

/** Case names, per target label, that ran with every session on one node of a multi-writer cluster. */
const onOneNode = new Map<string, Set<string>>();

/**
 * The session a case about one session's row locks and another's (lock waits, SKIP LOCKED) runs
 * with: the suite's own on a single server; on a multi-writer cluster (`multiWriterCluster`), where
 * row locks are local to a node, an extra session with the client, the probe and every extra client
 * on one node, so the case tests what it says, on that node. Never a skip: the case runs whole, and
 * the kit prints its name (`printOneNodeCases`). What holds across nodes instead is certification:
 * see the cluster suite and docs/compatibility.md.
 */
export async function lockingSession<Tx>(ctx: SuiteContext<Tx>, caseName: string): Promise<HarnessSession<Tx>> {
  if (!ctx.target.multiWriterCluster) return ctx.session;
  const label = `${ctx.target.engine} ${ctx.target.version}`;
  if (!onOneNode.has(label)) onOneNode.set(label, new Set());
  onOneNode.get(label)!.add(caseName);
  return ctx.openExtra({ oneNode: true });
}

/** Prints, once per run, the cases `lockingSession` ran on one node of a cluster. */
function printOneNodeCases(): void {
  for (const [label, names] of onOneNode) {
    process.stderr.write(
      `taskrow conformance: on the multi-writer cluster at ${label}, ${names.size} case(s) about row locks between sessions ran with every session on one node (row locks are per node there; docs/compatibility.md):\n${[...names].map((n) => `  - ${n}`).join('\n')}\n`,
    );
  }
  onOneNode.clear();
}

/** Registers beforeAll / afterAll for one target and returns a getter for the open session. */
export function useSession<Tx>(harness: ConformanceHarness<Tx>, target: ConformanceTarget): () => SuiteContext<Tx> {
  const prefix = `${freshName('c')}_`;
  let ctx: SuiteContext<Tx> | undefined;
  let failed: unknown;
  const extras: HarnessSession<Tx>[] = [];
  // A session that does not open fails every case of the suite with the reason (a failing
  // beforeAll would only mark them skipped, and reports keep no hook errors).
  beforeAll(() => openSuite().catch((err: unknown) => void (failed = err)));
  const openSuite = async (): Promise<void> => {
    const session = await harness.open(target, { prefix });
    await session.taskrow.migrate().catch(async (err: unknown) => {
      await session.close().catch(() => undefined);
      throw err;
    });
    ctx = {
      target,
      prefix,
      session,
      openExtra: async (options) => {
        const s = await harness.open(target, { prefix, ...(options?.oneNode ? { oneNode: true } : {}) });
        extras.push(s);
        return s;
      },
    };
  };
  afterAll(async () => {
    if (!ctx) return;
    await ctx.session.taskrow.close().catch(() => undefined);
    try {
      await dropPrefix(ctx.session.probe, prefix);
    } finally {
      await Promise.allSettled(extras.map((s) => s.close()));
      await ctx.session.close();
      printOneNodeCases();
    }
  });
  return () => {
    if (!ctx) throw new Error(`the conformance session did not open: ${failed instanceof Error ? failed.message : String(failed)}`, { cause: failed });
    return ctx;
  };
}
