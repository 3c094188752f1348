import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { freshLoop, snapshot } from './probe.js';
import { rejection } from '../expect.js';

type Call = [label: string, call: () => Promise<unknown>, mentions: string];

/** Bad input: a TaskrowError naming the value, and nothing changes. */
export function loopInput<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('rejects bad limits and durations naming the value, and changes nothing', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add([1, 2, 3]);
    const before = await snapshot(c.session.probe, loop.table);
    const calls: Call[] = [
      ['lockFor 0', () => loop.get(5, { lockFor: 0 }), 'lockFor'],
      ['lockFor -600000', () => loop.get(5, { lockFor: -600_000 }), '-600000'],
      ['lockFor NaN', () => loop.get(5, { lockFor: NaN }), 'NaN'],
      ['lockFor Infinity', () => loop.get(5, { lockFor: Infinity }), 'Infinity'],
      ['lockFor 1500 (not whole seconds)', () => loop.get(5, { lockFor: 1500 }), '1500'],
      ['lockFor 1.5', () => loop.get(5, { lockFor: 1.5 }), '1.5'],
      ['lockFor "60000"', () => loop.get(5, { lockFor: '60000' as never }), '"60000"'],
      ['minLoopTime NaN', () => loop.get(5, { minLoopTime: NaN }), 'minLoopTime'],
      ['minLoopTime -Infinity', () => loop.get(5, { minLoopTime: -Infinity }), '-Infinity'],
      ['limit -1', () => loop.get(-1), '-1'],
      ['limit 2.5', () => loop.get(2.5), '2.5'],
      ['limit NaN', () => loop.get(NaN), 'NaN'],
      ['limit "3"', () => loop.get('3' as never), '"3"'],
      ['limit null', () => loop.get(null as never), 'null'],
      ['limit over the cap', () => loop.get(100_001), '100001'],
      ['bump lockFor NaN', () => loop.bump(1, { lockFor: NaN }), 'NaN'],
      ['bump lockFor Infinity', () => loop.bump(1, { lockFor: -Infinity }), 'Infinity'],
      ['autoAdd "yes"', () => loop.did(1, { autoAdd: 'yes' as never }), 'autoAdd'],
      ['updated 1', () => loop.add(9, { updated: 1 as never }), 'updated'],
      ['dryRun "true"', () => loop.remove(1, { dryRun: 'true' as never }), 'dryRun'],
      ['unknown option lock_for', () => loop.get(5, { lock_for: 10_000 } as never), 'lock_for'],
      ['options not an object', () => loop.did(1, 5 as never), 'options'],
      ['loop() turns "yes"', async () => c.session.taskrow.loop(loop.name, { turns: 'yes' as never }), `true, false or 'auto', got "yes"`],
      ['loop() unknown option turn', async () => c.session.taskrow.loop(loop.name, { turn: true } as never), 'its options are idType, turns'],
    ];
    for (const [label, call, mentions] of calls) {
      const err = await rejection(call, 'INVALID_ARGUMENT');
      expect(err.message, label).toContain(mentions);
    }
    expect(await snapshot(c.session.probe, loop.table)).toBe(before);
  });

  it('rejects ids of the wrong type or range naming the id, and writes none of the batch', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add([1, 2, 3]);
    const before = await snapshot(c.session.probe, loop.table);
    const bad: [unknown, string][] = [
      ['a', '"a"'],
      [1.5, '1.5'],
      [2 ** 31, String(2 ** 31)],
      [-(2 ** 31) - 1, String(-(2 ** 31) - 1)],
      [NaN, 'NaN'],
      [null, 'null'],
      [undefined, 'undefined'],
      [5n, '5n'],
      [{}, 'object'],
    ];
    for (const [id, mentions] of bad) {
      for (const call of [
        () => loop.add([4, id as number]),
        () => loop.did([id as number, 5]),
        () => loop.unlock(id as number),
        () => loop.bump([6, id as number]),
        () => loop.remove([1, id as number]),
        () => loop.check([id as number]),
      ]) {
        expect((await rejection(call, 'INVALID_ARGUMENT')).message).toContain(mentions);
      }
    }
    expect(await snapshot(c.session.probe, loop.table)).toBe(before);
  });

  it('checks ids against a declared id type before any statement, even for a loop that does not exist', async () => {
    const c = ctx();
    const missing = c.session.taskrow.loop(freshName('nx'), { idType: { string: 4 } });
    // Were a statement run, the missing loop would answer NOT_FOUND instead.
    expect((await rejection(missing.add(['abcde']), 'INVALID_ARGUMENT')).message).toContain('"abcde"');
    await rejection(missing.did(7 as never), 'INVALID_ARGUMENT');
    await rejection(missing.get(1, { lockFor: 0 }), 'INVALID_ARGUMENT');
    await rejection(missing.add(['abcd']), 'NOT_FOUND');
    await rejection(() => c.session.taskrow.loop('x', { idType: 'varchar' as never }), 'INVALID_ARGUMENT');
  });

  it('answers limit 0 and empty id lists without a statement', async () => {
    const c = ctx();
    // The loop does not exist: any statement would reject with NOT_FOUND.
    const missing = c.session.taskrow.loop(freshName('nx'));
    expect(await missing.get(0)).toEqual([]);
    expect(await missing.get(0, { lockFor: 60_000, dryRun: true })).toEqual([]);
    for (const empty of [[], new Set(), (function* () {})()]) {
      expect(await missing.add(empty as never)).toBe(0);
      expect(await missing.remove(empty as never)).toBe(0);
      expect(await missing.did(empty as never)).toBe(0);
      expect(await missing.unlock(empty as never)).toBe(0);
      expect(await missing.bump(empty as never, { lockFor: -5000 })).toBe(0);
      expect(await missing.check(empty as never)).toEqual(new Map());
    }
    await rejection(missing.get(1), 'NOT_FOUND');
  });
}
