import { expect, it } from 'vitest';
import { MAX_PAYLOAD_DEPTH } from '../../queue/model/payload.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { rejection } from '../expect.js';
import { probeJobs, probeTotal } from './probe.js';

/** Expects `call` to refuse the misspelt option `name`, naming it and the accepted `names`. */
export async function refusesOption(call: () => unknown, name: string, names: readonly string[]): Promise<void> {
  const err = await rejection(call, 'INVALID_ARGUMENT');
  expect(err.message).toContain(JSON.stringify(name));
  for (const n of names) expect(err.message).toContain(n);
}

/** Strict options and payloads that round-trip (issue: misspelt options were silently ignored). */
export function queueStrict<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('refuses a misspelt option of every Queue function before any SQL, naming it and the accepted names', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const before = await probeTotal(session.probe, prefix);
    await refusesOption(() => session.taskrow.queue(name, { maxAtempts: 1 } as never), 'maxAtempts', ['maxAttempts', 'backoff', 'keepFinishedFor']);
    await refusesOption(() => session.taskrow.queue(name, { backoff: { bas: 1 } } as never), 'bas', ['base', 'max']);
    await refusesOption(() => q.enqueue(1, { dely: 60 } as never), 'dely', ['delay', 'runAt', 'priority', 'dedupKey', 'group']);
    await refusesOption(() => q.enqueueMany([{ payload: 1, grop: 'eu' } as never]), 'grop', ['group']);
    await refusesOption(() => q.claim({ limit: 1, lease: 5000, grop: 'eu' } as never), 'grop', ['limit', 'lease', 'group']);
    await refusesOption(() => q.work(() => undefined, { concurency: 4 } as never), 'concurency', ['concurrency', 'batchSize', 'lease', 'pollInterval']);
    await refusesOption(() => q.list({ limt: 1 } as never), 'limt', ['state', 'group', 'limit', 'after']);
    await refusesOption(() => q.retryDead({ id: [1] } as never), 'id', ['ids', 'limit']);
    await refusesOption(() => q.purgeDead({ id: [1] } as never), 'id', ['ids']);
    expect(await probeTotal(session.probe, prefix)).toBe(before);
    const [job] = await (async () => {
      await q.enqueue('held');
      return q.claim({ limit: 1, lease: 60_000 });
    })();
    await refusesOption(() => q.fail(job!, 'x', { retryInn: 1 } as never), 'retryInn', ['retryIn']);
    await refusesOption(() => q.release(job!, { dealy: 1 } as never), 'dealy', ['delay']);
    expect((await probeJobs(session.probe, prefix, name)).map((j) => [j.state, j.attempt])).toEqual([['running', 1]]);
    await rejection(() => q.work('x' as never), 'INVALID_ARGUMENT');
  });

  it('refuses payloads that would not come back as they went in, naming the path, writing nothing', async () => {
    const { session, prefix } = ctx();
    const q = session.taskrow.queue<unknown>(freshName('q'));
    let deep: unknown = 1;
    for (let i = 0; i < 2000; i++) deep = { deep };
    let atLimit: unknown = 1;
    for (let i = 0; i < MAX_PAYLOAD_DEPTH; i++) atLimit = [atLimit];
    const cases: [unknown, string][] = [
      // biome-ignore lint/suspicious/noSparseArray: a hole is what this case is about.
      [[, 1], 'payload[0] is a hole'],
      [{ at: new Date(Number.NaN) }, 'payload.at is an invalid Date'],
      [{ x: { toJSON: () => Number.NaN } }, 'payload.x.toJSON() is the number NaN'],
      [{ x: { toJSON: () => () => 1 } }, 'payload.x.toJSON() is a function'],
      [new Uint8Array([1, 2]), 'Uint8Array'],
      [{ b: Buffer.from('ab') }, 'payload.b is a Buffer'],
      [{ a: new ArrayBuffer(2) }, 'ArrayBuffer'],
      [{ r: /x/ }, 'RegExp'],
      [deep, `deeper than the limit of ${MAX_PAYLOAD_DEPTH} levels`],
      [[atLimit], `deeper than the limit of ${MAX_PAYLOAD_DEPTH} levels`],
    ];
    const before = await probeTotal(session.probe, prefix);
    for (const [payload, says] of cases) expect((await rejection(q.enqueue(payload), 'INVALID_ARGUMENT')).message).toContain(says);
    expect(await probeTotal(session.probe, prefix)).toBe(before);
    // What does round-trip is stored as given, nesting up to the depth limit included.
    for (const ok of [{ d: new Date(0), s: 'é', n: null, a: [1, [2]] }, atLimit]) {
      const { id } = await q.enqueue(ok);
      const stored = (await probeJobs(session.probe, prefix, q.name)).find((j) => j.id === id);
      expect(stored?.payload).toEqual(JSON.parse(JSON.stringify(ok)));
    }
  });

  it('names the value and its type when refusing one, and the count of an over-long batch', async () => {
    const { session } = ctx();
    const q = session.taskrow.queue(freshName('q'));
    expect((await rejection(q.enqueue(1, { priority: '5' as never }), 'INVALID_ARGUMENT')).message).toContain('"5"');
    expect((await rejection(q.claim({ limit: 1.5, lease: 5000 }), 'INVALID_ARGUMENT')).message).toContain('1.5 (a number)');
    const many = Array.from({ length: 100_001 }, () => ({ payload: 1 }));
    const err = await rejection(q.enqueueMany(many), 'INVALID_ARGUMENT');
    expect(err.message).toContain('100001');
    expect(err.message).toContain('100000');
  });
}
