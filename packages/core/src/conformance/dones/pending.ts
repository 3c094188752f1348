import { expect, it } from 'vitest';
import { TaskrowError } from '../../errors.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';

async function collect(it: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const k of it) out.push(k);
  return out;
}

/** pending(): the resubmission story. */
export function donesPending<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('streams the not-done candidates of an async iterable, in input order', async () => {
    const { session } = ctx();
    const d = session.taskrow.dones(freshName('ns'));
    const all = Array.from({ length: 10_000 }, (_, i) => `task-${(i * 7919) % 10_000}`);
    const doneSet = new Set(all.filter((_, i) => i % 3 !== 0));
    await d.mark([...doneSet]);
    async function* candidates(): AsyncGenerator<string> {
      for (const k of all) yield k;
    }
    const pending = await collect(d.pending(candidates(), { chunkSize: 700 }));
    expect(pending).toEqual(all.filter((k) => !doneSet.has(k)));
  });

  it('accepts a plain iterable, keeps duplicates, and yields everything for an unknown namespace', async () => {
    const { session } = ctx();
    const d = session.taskrow.dones(freshName('ns'));
    await d.mark(['b']);
    expect(await collect(d.pending(['a', 'b', 'c', 'a']))).toEqual(['a', 'c', 'a']);
    expect(await collect(session.taskrow.dones(freshName('ns')).pending(['a', 'b']))).toEqual(['a', 'b']);
    expect(await collect(d.pending([]))).toEqual([]);
  });

  it('streams lazily: the first results arrive from an endless source', async () => {
    const { session } = ctx();
    const d = session.taskrow.dones(freshName('ns'));
    await d.mark(['t0', 't2']);
    let produced = 0;
    function* endless(): Generator<string> {
      for (let i = 0; ; i++) {
        produced += 1;
        yield `t${i}`;
      }
    }
    const first: string[] = [];
    for await (const k of d.pending(endless(), { chunkSize: 100 })) {
      first.push(k);
      if (first.length === 3) break;
    }
    expect(first).toEqual(['t1', 't3', 't4']);
    // Bounded read-ahead: at most a few chunks were pulled from the source.
    expect(produced).toBeLessThanOrEqual(100 * 4);
  });

  it('rejects a bad candidate with INVALID_KEY naming its position', async () => {
    const { session } = ctx();
    const d = session.taskrow.dones(freshName('ns'));
    const err = await collect(d.pending(['ok', '', 'later'])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TaskrowError);
    expect((err as TaskrowError).code).toBe('INVALID_KEY');
    expect((err as TaskrowError).message).toContain('#1');
  });
}
