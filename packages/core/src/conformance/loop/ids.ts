import { expect, it } from 'vitest';
import type { SuiteContext } from '../session.js';
import { freshLoop, probeIds } from './probe.js';
import { rejection } from '../expect.js';

/** String and bigint ids: exact, ordered by the server the way the original's column type would. */
export function loopIds<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('keeps string ids exact: "a", "A", "a " and "a<TAB>" are four ids, Unicode round-trips byte for byte', async () => {
    const c = ctx();
    const loop = await freshLoop(c, { string: 64 });
    const ids = ['a', 'A', 'a ', 'a\t', '😀', 'e\u0301', '\u00e9', '中文'];
    expect(await loop.add(ids)).toBe(ids.length);
    expect(await loop.add(['a', 'A'])).toBe(0);
    const hex = await c.session.probe.query<{ h: string }>(`SELECT HEX(\`id\`) AS h FROM \`${loop.table}\``);
    expect(hex.map((r) => r.h.toLowerCase()).sort()).toEqual(ids.map((i) => Buffer.from(i, 'utf8').toString('hex')).sort());
    const byBytes = [...ids].sort((x, y) => Buffer.compare(Buffer.from(x, 'utf8'), Buffer.from(y, 'utf8')));
    expect(await loop.get(20)).toEqual(byBytes);
    expect([...(await loop.check(['a ', 'b'])).keys()]).toEqual(['a ']);
    expect(await loop.did('a ')).toBe(1);
    expect(await loop.remove(['a\t'])).toBe(1);
    const s = await loop.stats();
    expect([s.minId, s.maxId]).toEqual([byBytes[0], byBytes[byBytes.length - 1]]);
    expect(await probeIds(c.session.probe, loop.table)).toHaveLength(ids.length - 1);
  });

  it('takes string ids up to the declared length in UTF-8 bytes, and rejects longer ones naming them', async () => {
    const c = ctx();
    const loop = await freshLoop(c, { string: 8 });
    expect(await loop.add(['😀😀', '12345678'])).toBe(2);
    const err = await rejection(loop.add(['ok', '😀😀a']), 'INVALID_ARGUMENT');
    expect(err.message).toContain('9 UTF-8 bytes');
    expect(err.message).toContain('at most 8');
    await rejection(loop.did('123456789'), 'INVALID_ARGUMENT');
    expect((await probeIds(c.session.probe, loop.table)).sort()).toEqual(['12345678', '😀😀'].sort());
  });

  it('keeps bigint ids exact beyond 2^53, accepts numbers, and orders numerically', async () => {
    const c = ctx();
    const loop = await freshLoop(c, 'bigint');
    const max = 2n ** 63n - 1n;
    const min = -(2n ** 63n);
    expect(await loop.add([9_007_199_254_740_993n, max, min, 10, -5n, 2])).toBe(6);
    expect(await loop.add(10n)).toBe(0);
    expect(await loop.get(3)).toEqual([min, -5n, 2n]);
    expect(await loop.get(10)).toEqual([10n, 9_007_199_254_740_993n, max]);
    expect(await probeIds(c.session.probe, loop.table)).toEqual([min, -5n, 2n, 10n, 9_007_199_254_740_993n, max].map(String));
    const status = await loop.check([max, 9_007_199_254_740_992n]);
    expect([...status.keys()]).toEqual([max]);
    expect(await loop.did([9_007_199_254_740_993n])).toBe(1);
    const s = await loop.stats();
    expect([s.minId, s.maxId]).toEqual([min, max]);
    await rejection(loop.add(max + 1n), 'INVALID_ARGUMENT');
    await rejection(loop.add(2 ** 53), 'INVALID_ARGUMENT'); // not a safe integer: it may already be rounded
    await rejection(loop.add('12' as never), 'INVALID_ARGUMENT');
  });

  it('takes the whole int range and orders numerically', async () => {
    const c = ctx();
    const loop = await freshLoop(c, 'int');
    expect(await loop.add([2_147_483_647, -2_147_483_648, 0, 9, 10])).toBe(5);
    expect(await loop.get(10)).toEqual([-2_147_483_648, 0, 9, 10, 2_147_483_647]);
    const s = await loop.stats();
    expect([s.minId, s.maxId]).toEqual([-2_147_483_648, 2_147_483_647]);
  });
}
