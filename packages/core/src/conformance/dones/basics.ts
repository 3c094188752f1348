import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { refusesOption } from '../queue/strict.js';
import { probeCount, probeKeys, probeNow } from './probe.js';

/** mark / unmark / isDone / areDone / allDone / anyDone / count / markedAt / list. */
export function donesBasics<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('marks, checks and unmarks one key, verified through the probe', async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    const d = session.taskrow.dones(ns);
    expect(await d.isDone('task-1')).toBe(false);
    expect(await d.mark('task-1')).toBe(1);
    expect(await probeKeys(session.probe, prefix, ns)).toEqual(['task-1']);
    expect(await d.isDone('task-1')).toBe(true);
    expect(await d.mark('task-1')).toBe(0);
    expect(await probeCount(session.probe, prefix, ns)).toBe(1);
    expect(await d.unmark('task-1')).toBe(1);
    expect(await d.unmark('task-1')).toBe(0);
    expect(await probeKeys(session.probe, prefix, ns)).toEqual([]);
    expect(await d.isDone('task-1')).toBe(false);
  });

  it('marks a batch in one call and counts only new keys', async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    const d = session.taskrow.dones(ns);
    const keys = Array.from({ length: 2500 }, (_, i) => `k${i}`);
    expect(await d.mark(keys.slice(0, 1000))).toBe(1000);
    expect(await d.mark(keys)).toBe(1500);
    expect(await probeCount(session.probe, prefix, ns)).toBe(2500);
    expect(await d.count()).toBe(2500);
    expect(await d.unmark(keys.slice(0, 700).concat(['never-marked']))).toBe(700);
    expect(await probeCount(session.probe, prefix, ns)).toBe(1800);
  });

  it('answers areDone in input order, allDone and anyDone (vacuous cases included)', async () => {
    const { session } = ctx();
    const d = session.taskrow.dones(freshName('ns'));
    await d.mark(['b', 'd']);
    expect(await d.areDone(['a', 'b', 'c', 'd', 'b'])).toEqual(['b', 'd', 'b']);
    expect(await d.allDone(['b', 'd'])).toBe(true);
    expect(await d.allDone(['b', 'c'])).toBe(false);
    expect(await d.anyDone(['a', 'c'])).toBe(false);
    expect(await d.anyDone(['a', 'd'])).toBe(true);
    expect(await d.allDone([])).toBe(true);
    expect(await d.anyDone([])).toBe(false);
    expect(await d.areDone([])).toEqual([]);
  });

  it('records when a key was marked by the database clock', async () => {
    const { session } = ctx();
    const d = session.taskrow.dones(freshName('ns'));
    const before = await probeNow(session.probe);
    await d.mark('t');
    const after = await probeNow(session.probe);
    const at = await d.markedAt('t');
    expect(at).toBeInstanceOf(Date);
    expect(at!.getTime()).toBeGreaterThanOrEqual(Math.floor(before));
    expect(at!.getTime()).toBeLessThanOrEqual(Math.ceil(after));
    expect(await d.markedAt('not-marked')).toBeNull();
  });

  it('lists every key exactly once across pages', async () => {
    const { session } = ctx();
    const d = session.taskrow.dones(freshName('ns'));
    const keys = Array.from({ length: 257 }, (_, i) => `item/${i}`);
    await d.mark(keys);
    const seen: string[] = [];
    let after: string | undefined;
    let pages = 0;
    do {
      const page = await d.list({ limit: 50, after });
      seen.push(...page.entries.map((e) => e.key));
      after = page.next;
      pages += 1;
    } while (after !== undefined);
    expect(pages).toBe(6);
    expect(seen.sort()).toEqual([...keys].sort());
  });

  it('refuses a misspelt option of list, clear and pending, naming it and the accepted names, changing nothing', async () => {
    const { session, prefix } = ctx();
    const ns = freshName('ns');
    const d = session.taskrow.dones(ns);
    await d.mark(['a', 'b']);
    await refusesOption(() => d.list({ limt: 1 } as never), 'limt', ['limit', 'after']);
    await refusesOption(() => d.clear({ purg: 'wait' } as never), 'purg', ['purge']);
    await refusesOption(() => d.pending(['a', 'c'], { chunk: 1 } as never).next(), 'chunk', ['chunkSize']);
    expect(await probeKeys(session.probe, prefix, ns)).toEqual(['a', 'b']);
  });

  it('keeps namespaces apart', async () => {
    const { session, prefix } = ctx();
    const [a, b] = [freshName('ns'), freshName('ns')];
    await session.taskrow.dones(a).mark(['x', 'y']);
    await session.taskrow.dones(b).mark(['y']);
    expect(await session.taskrow.dones(b).isDone('x')).toBe(false);
    expect(await session.taskrow.dones(b).count()).toBe(1);
    await session.taskrow.dones(a).unmark('y');
    expect(await probeKeys(session.probe, prefix, b)).toEqual(['y']);
    expect(await probeKeys(session.probe, prefix, a)).toEqual(['x']);
  });
}
