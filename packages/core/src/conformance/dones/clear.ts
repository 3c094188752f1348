import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeCount, probeKeys } from './probe.js';

async function rowsOfName(ctx: SuiteContext<unknown>, ns: string): Promise<number> {
  const rows = await ctx.session.probe.query<{ n: unknown }>(
    `SELECT COUNT(*) AS n FROM \`${ctx.prefix}dones\` d JOIN \`${ctx.prefix}dones_gen\` g ON g.gen = d.gen WHERE g.ns = ?`,
    [ns],
  );
  return Number(rows[0]?.n);
}

/** clear(): instant namespace reset, purge of old rows, other namespaces untouched. */
export function donesClear<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('empties the namespace at once and purges the old rows', async () => {
    const c = ctx();
    const [ns, other] = [freshName('ns'), freshName('ns')];
    const d = c.session.taskrow.dones(ns);
    await d.mark(Array.from({ length: 12_000 }, (_, i) => `k${i}`));
    await c.session.taskrow.dones(other).mark(['k1', 'k2']);
    await d.clear({ purge: 'wait' });
    expect(await d.count()).toBe(0);
    expect(await d.isDone('k1')).toBe(false);
    expect(await probeCount(c.session.probe, c.prefix, ns)).toBe(0);
    expect(await rowsOfName(c as SuiteContext<unknown>, ns)).toBe(0);
    expect(await probeKeys(c.session.probe, c.prefix, other)).toEqual(['k1', 'k2']);
    expect(await d.mark(['k1'])).toBe(1);
    expect(await probeKeys(c.session.probe, c.prefix, ns)).toEqual(['k1']);
  });

  it('leaves old rows for purgeCleared() with purge "none", invisible meanwhile', async () => {
    const c = ctx();
    const ns = freshName('ns');
    const d = c.session.taskrow.dones(ns);
    await d.mark(['a', 'b', 'c']);
    await d.clear({ purge: 'none' });
    expect(await d.areDone(['a', 'b', 'c'])).toEqual([]);
    expect(await rowsOfName(c as SuiteContext<unknown>, ns)).toBe(3);
    expect(await c.session.taskrow.purgeCleared()).toBeGreaterThanOrEqual(3);
    expect(await rowsOfName(c as SuiteContext<unknown>, ns)).toBe(0);
  });

  it('purges in the background and close() waits for it', async () => {
    const c = ctx();
    const extra = await c.openExtra();
    const ns = freshName('ns');
    const d = extra.taskrow.dones(ns);
    await d.mark(Array.from({ length: 6000 }, (_, i) => `b${i}`));
    await d.clear();
    expect(await d.count()).toBe(0);
    await extra.taskrow.close();
    expect(await rowsOfName(c as SuiteContext<unknown>, ns)).toBe(0);
  });

  it('does not make writers in other namespaces wait while a clear is uncommitted', async () => {
    const c = ctx();
    const [big, other] = [freshName('ns'), freshName('ns')];
    await c.session.taskrow.dones(big).mark(Array.from({ length: 20_000 }, (_, i) => `k${i}`));
    await c.session.taskrow.dones(other).mark('seed');
    let finishedWhileHeld = false;
    await c.session.withDriverTransaction('rollback', async (tx) => {
      // The clear holds its locks until this transaction ends; marks elsewhere must not wait for it.
      await c.session.taskrow.in(tx).dones(big).clear({ purge: 'none' });
      const writes = Promise.all(Array.from({ length: 20 }, (_, i) => c.session.taskrow.dones(other).mark([`o${i}a`, `o${i}b`])));
      finishedWhileHeld = await Promise.race([writes.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
      await writes;
    });
    expect(finishedWhileHeld).toBe(true);
    expect(await probeCount(c.session.probe, c.prefix, other)).toBe(41);
    expect(await probeCount(c.session.probe, c.prefix, big)).toBe(20_000); // rolled back
  });
}
