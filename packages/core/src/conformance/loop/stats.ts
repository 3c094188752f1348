import { expect, it } from 'vitest';
import { fromHeads, type HeadRow } from '../../loop/claim.js';
import { idCodec } from '../../loop/ids.js';
import { loopSql } from '../../loop/sql.js';
import { loopTable } from '../../loop/tables.js';
import { handlerReads } from '../reads.js';
import type { SuiteContext } from '../session.js';
import { freshLoop, passTime, probeNow, range, setTimes } from './probe.js';

/** Rows of the big-loop case: TASKROW_CONFORMANCE_LOOP_ROWS, default 1,000,000 (a multiple of 10,000). */
function bigRows(): number {
  const n = Number(process.env['TASKROW_CONFORMANCE_LOOP_ROWS'] ?? 1_000_000);
  return Number.isInteger(n) && n >= 10_000 && n % 10_000 === 0 ? n : 1_000_000;
}

const DIGITS =
  '(SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';

/** stats(): every key of the original, its units, and its cost on a big loop. */
export function loopStats<Tx>(ctx: () => SuiteContext<Tx>): void {
  it("reports every key of the original's stats() on an empty loop: zeros, ids null", async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    expect(await loop.stats()).toStrictEqual({
      bumped: 0,
      locked: 0,
      minBumpTime: 0,
      maxBumpTime: 0,
      minId: null,
      maxId: null,
      minLockTime: 0,
      maxLockTime: 0,
      minUpdateTime: 0,
      maxUpdateTime: 0,
    });
  });

  it('counts locked and bumped ids and reports their times in milliseconds', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(10, 19));
    expect(await loop.get(1)).toEqual([10]);
    await loop.did([11, 12]);
    await passTime(c.session.probe, loop.table, 100, [11, 12]); // updated 100 s ago
    await loop.bump(12);
    await loop.bump(13, { lockFor: 60_000 });
    await loop.bump([14, 15], { lockFor: -60_000 });
    expect(await loop.get(1)).toEqual([14]);
    await loop.did(14);
    const s = await loop.stats();
    expect(s.locked).toBe(2); // 10, 13
    expect(s.bumped).toBe(2); // 12, 15
    expect(s.minId).toBe(10);
    expect(s.maxId).toBe(19);
    expect(s.minLockTime).toBeGreaterThanOrEqual(55_000); // 13
    expect(s.minLockTime).toBeLessThanOrEqual(60_000);
    expect(s.maxLockTime).toBeGreaterThanOrEqual(3_600_000 - 6000); // 10
    expect(s.maxLockTime).toBeLessThanOrEqual(3_600_000);
    expect(s.minBumpTime).toBeGreaterThanOrEqual(0); // 12
    expect(s.minBumpTime).toBeLessThanOrEqual(5000);
    expect(s.maxBumpTime).toBeGreaterThanOrEqual(60_000); // 15
    expect(s.maxBumpTime).toBeLessThanOrEqual(65_000);
    expect(s.minUpdateTime).toBeGreaterThanOrEqual(0); // 14
    expect(s.minUpdateTime).toBeLessThanOrEqual(5000);
    expect(s.maxUpdateTime).toBeGreaterThanOrEqual(100_000); // 11
    expect(s.maxUpdateTime).toBeLessThanOrEqual(105_000);
  });

  it('takes the update times over every id, locked and bumped ones too, as doloop', async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    await loop.add(range(1, 4));
    const now = await probeNow(c.session.probe);
    // Unlocked ids updated 50 and 60 s ago; the newest update is on a locked id, the oldest on a bumped one.
    await setTimes(c.session.probe, loop.table, 1, { lastUpdated: -50, lockUntil: null }, now);
    await setTimes(c.session.probe, loop.table, 2, { lastUpdated: -60, lockUntil: null }, now);
    await setTimes(c.session.probe, loop.table, 3, { lastUpdated: -10, lockUntil: 600 }, now);
    await setTimes(c.session.probe, loop.table, 4, { lastUpdated: -900, lockUntil: -5 }, now);
    const s = await loop.stats();
    expect([s.locked, s.bumped]).toEqual([1, 1]);
    expect(s.minUpdateTime).toBeGreaterThanOrEqual(10_000); // id 3, locked
    expect(s.minUpdateTime).toBeLessThan(15_000);
    expect(s.maxUpdateTime).toBeGreaterThanOrEqual(900_000); // id 4, bumped
    expect(s.maxUpdateTime).toBeLessThan(905_000);
  });

  it(`stays index-only on a ${bigRows().toLocaleString('en-US')}-row loop: stats, check and get read only what they need`, async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    const n = bigRows();
    const { probe } = c.session;
    const digits = Math.log10(n);
    const from = Array.from({ length: digits }, (_, i) => `${DIGITS} d${i}`).join(', ');
    const value = Array.from({ length: digits }, (_, i) => `${10 ** i} * d${i}.n`).join(' + ');
    // One row in 10,000 locked (100 s ahead), one bumped (2 s ago), a third updated, the rest new.
    await probe.query(
      `INSERT INTO \`${loop.table}\` (\`id\`, \`last_updated\`, \`lock_until\`)
       SELECT s.n, IF(s.n % 3 = 0, UNIX_TIMESTAMP() - 4000 - s.n % 5000, NULL),
              CASE s.n % 10000 WHEN 1 THEN UNIX_TIMESTAMP() + 100 WHEN 2 THEN UNIX_TIMESTAMP() - 2 ELSE NULL END
       FROM (SELECT ${value} AS n FROM ${from}) s`,
    );
    const special = n / 10_000;
    await probe.query(`ANALYZE TABLE \`${loop.table}\``);
    const sql = loopSql(loopTable(c.prefix, loop.name), idCodec('int'));

    const stats = await handlerReads(probe, sql.stats());
    expect(Number(stats.rows[0]!['locked'])).toBe(special);
    expect(Number(stats.rows[0]!['bumped'])).toBe(special);
    expect(stats.reads).toBeLessThan(2 * special + 100);
    const s = await loop.stats();
    expect([s.locked, s.bumped, s.minId, s.maxId]).toEqual([special, special, 0, n - 1]);
    expect(s.maxUpdateTime).toBeGreaterThanOrEqual((4000 + 4999) * 1000);

    const ids = range(0, 999).map((i) => i * 997);
    const check = await handlerReads(probe, sql.check(ids.length), ids);
    expect(check.rows).toHaveLength(1000);
    expect(check.reads).toBeLessThanOrEqual(4 * 1000); // a few handler calls per key lookup (engines count differently), never a scan
    expect((await loop.check(ids)).size).toBe(1000);

    const claim = await handlerReads(probe, sql.claim(100), [3600]);
    expect(claim.rows).toHaveLength(100);
    expect(claim.reads).toBeLessThan(10 * 100); // both steps stop at the limit; the union is read and sorted once
    // get()'s own path: a plain read of where the steps start, then the locking read from there.
    const heads = await handlerReads(probe, sql.heads(100), [3600]);
    expect(heads.rows).toHaveLength(101);
    expect(heads.reads).toBeLessThan(10 * 100);
    const start = sql.claimFrom(100, fromHeads(idCodec('int'), heads.rows as unknown as HeadRow[]), 3600);
    const fromReads = await handlerReads(probe, start.sql, start.params);
    expect(fromReads.rows.map((r) => Number(r['v']))).toEqual(claim.rows.map((r) => Number(r['v'])));
    expect(fromReads.reads).toBeLessThan(10 * 100);
    const got = await loop.get(100);
    expect(got).toHaveLength(100);
    expect(got.slice(0, Math.min(special, 100)).every((id) => id % 10_000 === 2)).toBe(true); // bumped rows first
  });
}
