import { expect, it } from 'vitest';
import { freshName, type Probe } from '../harness.js';
import { runningStatement, until } from '../queue/probe.js';
import { lockingSession, type SuiteContext } from '../session.js';
import { probeCount, probeKeys } from './probe.js';

async function rowsOfName(ctx: SuiteContext<unknown>, ns: string): Promise<number> {
  const rows = await ctx.session.probe.query<{ n: unknown }>(
    `SELECT COUNT(*) AS n FROM \`${ctx.prefix}dones\` d JOIN \`${ctx.prefix}dones_gen\` g ON g.gen = d.gen WHERE g.ns = ?`,
    [ns],
  );
  return Number(rows[0]?.n);
}

/** The generation namespace `ns` writes to now. */
async function genOf(ctx: SuiteContext<unknown>, ns: string): Promise<number> {
  const rows = await ctx.session.probe.query<{ gen: unknown }>(`SELECT \`gen\` FROM \`${ctx.prefix}dones_ns\` WHERE \`name\` = ?`, [ns]);
  return Number(rows[0]?.gen);
}

/** Rows of generation `gen` still in the table, whether or not the generation is still known. */
async function rowsOfGen(ctx: SuiteContext<unknown>, gen: number): Promise<number> {
  const rows = await ctx.session.probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${ctx.prefix}dones\` WHERE \`gen\` = ?`, [gen]);
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
    const old = await genOf(c as SuiteContext<unknown>, ns);
    expect(await rowsOfGen(c as SuiteContext<unknown>, old)).toBe(12_000);
    await d.clear({ purge: 'wait' });
    expect(await d.count()).toBe(0);
    expect(await d.isDone('k1')).toBe(false);
    expect(await probeCount(c.session.probe, c.prefix, ns)).toBe(0);
    expect(await rowsOfName(c as SuiteContext<unknown>, ns)).toBe(0);
    expect(await rowsOfGen(c as SuiteContext<unknown>, old)).toBe(0); // every batch of the purge, not only the first
    expect(await probeKeys(c.session.probe, c.prefix, other)).toEqual(['k1', 'k2']);
    expect(await d.mark(['k1'])).toBe(1);
    expect(await probeKeys(c.session.probe, c.prefix, ns)).toEqual(['k1']);
  });

  it('leaves old rows for purgeCleared() with purge "none", invisible meanwhile', async () => {
    const c = ctx();
    const ns = freshName('ns');
    const d = c.session.taskrow.dones(ns);
    await d.mark(['a', 'b', 'c']);
    const old = await genOf(c as SuiteContext<unknown>, ns);
    await d.clear({ purge: 'none' });
    expect(await d.areDone(['a', 'b', 'c'])).toEqual([]);
    expect(await rowsOfName(c as SuiteContext<unknown>, ns)).toBe(3);
    expect(await c.session.taskrow.purgeCleared()).toBeGreaterThanOrEqual(3);
    expect(await rowsOfName(c as SuiteContext<unknown>, ns)).toBe(0);
    expect(await rowsOfGen(c as SuiteContext<unknown>, old)).toBe(0);
  });

  it('purges in the background and close() waits for it', async () => {
    const c = ctx();
    const extra = await c.openExtra();
    const ns = freshName('ns');
    const d = extra.taskrow.dones(ns);
    await d.mark(Array.from({ length: 6000 }, (_, i) => `b${i}`));
    const old = await genOf(c as SuiteContext<unknown>, ns);
    await d.clear();
    expect(await d.count()).toBe(0);
    await extra.taskrow.close();
    expect(await rowsOfName(c as SuiteContext<unknown>, ns)).toBe(0);
    expect(await rowsOfGen(c as SuiteContext<unknown>, old)).toBe(0);
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
  it('a mark of a namespace waits for an uncommitted clear() of it, then writes to the new generation', async () => {
    const c = ctx();
    const session = await lockingSession(c, 'a mark of a namespace waits for an uncommitted clear() of it');
    try {
      const ns = freshName('ns');
      const d = session.taskrow.dones(ns);
      expect(await d.mark(['old'])).toBe(1);
      const old = await genOf(c as SuiteContext<unknown>, ns);
      let marked: Promise<number> | undefined;
      let settled = false;
      const settledWhileHeld = await session.withDriverTransaction('commit', async (tx) => {
        await session.taskrow.in(tx).dones(ns).clear({ purge: 'none' });
        marked = d.mark(['new-1', 'new-2']);
        marked.then(
          () => (settled = true),
          () => (settled = true),
        );
        const running = async (): Promise<boolean> => (await runningStatement(session.probe, c.target.engine, `INSERT IGNORE INTO \`${c.prefix}dones\``)) > 0;
        await until('the mark to wait for the clear', async () => settled || (await running()));
        return settled;
      });
      expect(settledWhileHeld).toBe(false);
      expect(await marked).toBe(2);
      expect(await probeKeys(session.probe, c.prefix, ns)).toEqual(['new-1', 'new-2']);
      expect(await rowsOfGen(c as SuiteContext<unknown>, old)).toBe(1); // only the key marked before the clear
    } finally {
      if (session !== c.session) await session.taskrow.close();
    }
  });

  it('a handle that marked before another client cleared the namespace writes its next marks to the new generation, none left in the old', async () => {
    const c = ctx();
    const name = 'a handle that marked before another client cleared the namespace writes its next marks to the new generation';
    const session = await lockingSession(c, name);
    const { clients, close } = await session.openClients(1);
    try {
      const ns = freshName('ns');
      const mine = session.taskrow.dones(ns);
      expect(await mine.mark(['before'])).toBe(1);
      await clients[0]!.dones(ns).clear({ purge: 'wait' }); // the old generation is purged and forgotten
      expect(await mine.mark(['after-1', 'after-2'])).toBe(2);
      expect(await probeKeys(session.probe, c.prefix, ns)).toEqual(['after-1', 'after-2']);
      expect(await strayRows(session.probe, c.prefix)).toBe(0);
    } finally {
      await close();
      if (session !== c.session) await session.taskrow.close();
    }
  });

  it('marks racing clear() of their namespace: each batch whole in one generation, every batch begun after the last clear returned is done, every one ended before it began is not', async () => {
    const c = ctx();
    const name = 'marks racing clear() of their namespace';
    const session = await lockingSession(c, name);
    const { clients, close } = await session.openClients(4);
    const ns = freshName('ns');
    /** The ledger, kept here: each batch's keys and when its mark() began and returned. */
    const batches: { keys: string[]; begun: number; ended: number }[] = [];
    let stop = false;
    const marker = async (m: number): Promise<void> => {
      for (let b = 0; !stop; b++) {
        const keys = Array.from({ length: 20 }, (_, i) => `m${m}-b${b}-${i}`);
        const begun = performance.now();
        await clients[m]!.dones(ns).mark(keys);
        batches.push({ keys, begun, ended: performance.now() });
      }
    };
    /** Resolves once the markers have finished `n` more batches. */
    const progress = async (n: number): Promise<void> => {
      const goal = batches.length + n;
      while (batches.length < goal) await new Promise((r) => setImmediate(r));
    };
    try {
      const markers = clients.map((_, m) => marker(m));
      let last = { begun: 0, ended: 0 };
      for (let round = 0; round < 6; round++) {
        await progress(12);
        const begun = performance.now();
        await session.taskrow.dones(ns).clear({ purge: round % 2 === 0 ? 'background' : 'wait' });
        last = { begun, ended: performance.now() };
      }
      await progress(40);
      stop = true;
      await Promise.all(markers);
      const done = new Set(await probeKeys(session.probe, c.prefix, ns));
      const mixed = batches.filter((b) => b.keys.some((k) => done.has(k)) && !b.keys.every((k) => done.has(k)));
      expect(mixed.map((b) => b.keys[0])).toEqual([]);
      const after = batches.filter((b) => b.begun > last.ended);
      const before = batches.filter((b) => b.ended < last.begun);
      expect(after.length).toBeGreaterThan(0);
      expect(before.length).toBeGreaterThan(0);
      expect(after.filter((b) => !done.has(b.keys[0]!)).map((b) => b.keys[0])).toEqual([]);
      expect(before.filter((b) => done.has(b.keys[0]!)).map((b) => b.keys[0])).toEqual([]);
      await session.taskrow.purgeCleared();
      expect(await strayRows(session.probe, c.prefix)).toBe(0);
    } finally {
      stop = true;
      await close();
      if (session !== c.session) await session.taskrow.close();
    }
  });
}

/** Rows of a generation no namespace or retired generation knows: marks stranded by a race with clear(). */
async function strayRows(probe: Probe, prefix: string): Promise<number> {
  const rows = await probe.query<{ n: unknown }>(
    `SELECT COUNT(*) AS n FROM \`${prefix}dones\` d LEFT JOIN \`${prefix}dones_gen\` g ON g.gen = d.gen WHERE g.gen IS NULL`,
  );
  return Number(rows[0]?.n);
}
