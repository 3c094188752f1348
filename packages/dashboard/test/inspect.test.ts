import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDb, target, type Db } from './harness.js';

const t = target();

describe(`taskrow.inspect() on ${t.engine} ${t.version}`, () => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb('i');
  });
  afterAll(async () => db?.close());

  it('pages through every queue in name order, one queue per index entry', async () => {
    for (const q of ['q-e', 'q-a', 'q-c', 'q-b', 'q-d']) await db.tr.queue(q).enqueue({ q });
    const seen: string[][] = [];
    let after: string | undefined;
    do {
      const page = await db.tr.inspect().queues({ after, limit: 2 });
      seen.push(page.items.map((q) => q.name));
      after = page.next;
    } while (after !== undefined);
    expect(seen).toEqual([['q-a', 'q-b'], ['q-c', 'q-d'], ['q-e']]);
  });

  it('counts each state up to countLimit and says when a count stopped there', async () => {
    const q = db.tr.queue('counted');
    await q.enqueueMany([...Array(7)].map((_, i) => ({ payload: i })));
    await q.enqueueMany([{ payload: 'later', delay: 3_600_000 }]);
    const capped = await db.tr.inspect().queue('counted', { countLimit: 5 });
    expect(capped.counts.ready).toEqual({ value: 5, exact: false });
    expect(capped.counts.delayed).toEqual({ value: 1, exact: true });
    const exact = await db.tr.inspect().queue('counted', { countLimit: 7 });
    expect(exact.counts.ready).toEqual({ value: 7, exact: true });
    expect((await db.tr.inspect().queue('empty-one')).counts.dead).toEqual({ value: 0, exact: true });
  });

  it('finds the oldest runnable job across priorities, as queue.stats() does', async () => {
    const q = db.tr.queue('aged');
    await q.enqueue({ first: true }, { priority: 7 });
    await q.enqueueMany([
      { payload: 2, priority: -5 },
      { payload: 3, priority: 0 },
    ]);
    const before = (await q.stats()).oldestRunnableAge!;
    const seen = (await db.tr.inspect().queue('aged')).oldestRunnableAge!;
    const after = (await q.stats()).oldestRunnableAge!;
    expect(seen).toBeGreaterThanOrEqual(before);
    expect(seen).toBeLessThanOrEqual(after);
    expect((await db.tr.inspect().queue('counted')).oldestRunnableAge).not.toBeNull();
    expect((await db.tr.inspect().queue('empty-one')).oldestRunnableAge).toBeNull();
  });

  it('pages loops and Dones namespaces with their counts', async () => {
    for (const l of ['l3', 'l1', 'l2']) await db.tr.createLoop(l, { idType: 'bigint' });
    const first = await db.tr.inspect().loops({ limit: 2 });
    expect(first.items.map((l) => [l.name, l.idType])).toEqual([
      ['l1', 'bigint'],
      ['l2', 'bigint'],
    ]);
    expect((await db.tr.inspect().loops({ after: first.next })).items.map((l) => l.name)).toEqual(['l3']);
    await db.tr.dones('ns-b').mark(['x', 'y', 'z']);
    await db.tr.dones('ns-a').mark(['x']);
    const ns = await db.tr.inspect().donesNamespaces({ countLimit: 2 });
    expect(ns.items.map((d) => [d.name, d.count.value, d.count.exact])).toEqual([
      ['ns-a', 1, true],
      ['ns-b', 2, false],
    ]);
    expect((await db.tr.inspect().donesNamespace('ns-b'))!.count).toEqual({ value: 3, exact: true });
    expect(await db.tr.inspect().donesNamespace('ns-none')).toBeNull();
  });

  it('refuses unknown options and bad names before any SQL', async () => {
    await expect(db.tr.inspect().queues({ bogus: 1 } as never)).rejects.toThrow(/no option "bogus"; accepted: after, limit, countLimit/);
    await expect(db.tr.inspect().queues({ limit: 201 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(db.tr.inspect().queue('bad name')).rejects.toMatchObject({ code: 'INVALID_NAME' });
    await expect(db.tr.inspect().loops({ countLimit: 3 } as never)).rejects.toThrow(/accepted: after, limit$/);
  });
});
