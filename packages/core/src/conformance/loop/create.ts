import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { freshLoop, probeIds } from './probe.js';
import { rejection } from '../expect.js';

async function tableExists<Tx>(c: SuiteContext<Tx>, table: string): Promise<boolean> {
  const rows = await c.session.probe.query('SELECT 1 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?', [table]);
  return rows.length > 0;
}

async function registryRow<Tx>(c: SuiteContext<Tx>, name: string): Promise<string | undefined> {
  const rows = await c.session.probe.query<{ t: unknown }>(`SELECT \`id_type\` AS t FROM \`${c.prefix}loops\` WHERE \`name\` = ?`, [name]);
  return rows[0] ? String(rows[0].t) : undefined;
}

/** createLoop, the registry, loop() on missing loops, loopSchemaSql, names. */
export function loopCreate<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('migrate() records the baseline schema version and creates the loop registry', async () => {
    const c = ctx();
    const versions = await c.session.probe.query<{ v: unknown }>(`SELECT \`version\` AS v FROM \`${c.prefix}schema_migrations\``);
    expect(versions.map((r) => Number(r.v))).toContain(1);
    expect(await tableExists(c, `${c.prefix}loops`)).toBe(true);
  });

  it("creates the original's table (BIGINT unix-second times, index on lock_until, last_updated) and records the id type", async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    expect(loop.table).toBe(`${c.prefix}loop_${loop.name}`);
    const cols = await c.session.probe.query<{ n: string; t: string; nul: string; k: string }>(
      `SELECT column_name AS n, data_type AS t, is_nullable AS nul, column_key AS k FROM information_schema.columns
       WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position`,
      [loop.table],
    );
    expect(cols.map((r) => [r.n, r.t, r.nul])).toEqual([
      ['id', 'int', 'NO'],
      ['last_updated', 'bigint', 'YES'],
      ['lock_until', 'bigint', 'YES'],
    ]);
    const idx = await c.session.probe.query<{ i: string; col: string }>(
      `SELECT index_name AS i, column_name AS col FROM information_schema.statistics
       WHERE table_schema = DATABASE() AND table_name = ? ORDER BY index_name, seq_in_index`,
      [loop.table],
    );
    expect(idx.map((r) => `${r.i}.${r.col}`)).toEqual(['lock_until.lock_until', 'lock_until.last_updated', 'PRIMARY.id']);
    expect(await registryRow(c, loop.name)).toBe('int');
    expect(await loop.idType()).toBe('int');
  });

  it('is idempotent, keeps the rows, and refuses another id type without changing anything', async () => {
    const c = ctx();
    const loop = await freshLoop(c, 'bigint');
    await loop.add([1n, 2n, 3n]);
    const again = await c.session.taskrow.createLoop(loop.name, { idType: 'bigint' });
    expect(await again.check([1n, 2n, 3n])).toHaveProperty('size', 3);
    const err = await rejection(c.session.taskrow.createLoop(loop.name, { idType: 'int' }), 'INVALID_ARGUMENT');
    expect(err.message).toContain('bigint');
    expect(err.message).toContain(loop.name);
    expect(await registryRow(c, loop.name)).toBe('bigint');
    expect(await probeIds(c.session.probe, loop.table)).toEqual(['1', '2', '3']);
    const declared = c.session.taskrow.loop(loop.name, { idType: { string: 10 } });
    expect((await rejection(declared.add('x'), 'INVALID_ARGUMENT')).message).toContain('bigint');
    expect(await probeIds(c.session.probe, loop.table)).toEqual(['1', '2', '3']);
  });

  it('rejects every operation on a loop that was never created with NOT_FOUND, and creates nothing', async () => {
    const c = ctx();
    const name = freshName('nx');
    const loop = c.session.taskrow.loop(name);
    for (const op of [
      () => loop.add(1),
      () => loop.remove(1),
      () => loop.get(5),
      () => loop.did(1),
      () => loop.unlock(1),
      () => loop.bump(1),
      () => loop.check(1),
      () => loop.stats(),
      () => loop.idType(),
    ]) {
      expect((await rejection(op, 'NOT_FOUND')).message).toContain(name);
    }
    // Nothing to do needs no statement: these succeed although the loop does not exist.
    expect(await loop.get(0)).toEqual([]);
    expect(await loop.did([])).toBe(0);
    expect(await loop.add([])).toBe(0);
    expect(await loop.check([])).toEqual(new Map());
    expect(await tableExists(c, `${c.prefix}loop_${name}`)).toBe(false);
    expect(await registryRow(c, name)).toBeUndefined();
    // Created afterwards, the same handle works.
    await c.session.taskrow.createLoop(name);
    expect(await loop.add([1, 2])).toBe(2);
  });

  it('prints DDL (create-doloop-table) that, applied by hand, gives a working loop', async () => {
    const c = ctx();
    const name = freshName('dd');
    const ddl = c.session.taskrow.loopSchemaSql(name, { idType: { string: 40 } });
    expect(ddl).toContain(`CREATE TABLE IF NOT EXISTS \`${c.prefix}loop_${name}\``);
    expect(ddl).toContain('VARBINARY(40)');
    expect(await tableExists(c, `${c.prefix}loop_${name}`)).toBe(false); // printing runs nothing
    for (const stmt of ddl
      .split(';\n')
      .map((s) => s.trim())
      .filter(Boolean))
      await c.session.probe.query(stmt);
    const loop = c.session.taskrow.loop(name, { idType: { string: 40 } });
    expect(await loop.add(['b', 'a'])).toBe(2);
    expect(await loop.get(5)).toEqual(['a', 'b']);
    expect(c.session.taskrow.loopSchemaSql('other')).toContain('`id` INT NOT NULL');
  });

  it('rejects invalid loop names with INVALID_NAME before any statement', async () => {
    const c = ctx();
    const before = await c.session.probe.query(`SELECT COUNT(*) AS n FROM \`${c.prefix}loops\``);
    for (const bad of ['', 'Upper', 'a'.repeat(33), 'x; DROP TABLE t', '../x', 'has space', 'dash-ed', 7, null]) {
      await rejection(() => c.session.taskrow.loop(bad as string), 'INVALID_NAME');
      await rejection(c.session.taskrow.createLoop(bad as string), 'INVALID_NAME');
      await rejection(() => c.session.taskrow.loopSchemaSql(bad as string), 'INVALID_NAME');
    }
    expect(await c.session.probe.query(`SELECT COUNT(*) AS n FROM \`${c.prefix}loops\``)).toEqual(before);
  });

  it('rejects bad id types naming the value', async () => {
    const c = ctx();
    for (const bad of ['varchar', 'INT', { string: 0 }, { string: 3073 }, { string: 1.5 }, { string: '10' }, { length: 10 }, null]) {
      const err = await rejection(c.session.taskrow.createLoop(freshName('bt'), { idType: bad as never }), 'INVALID_ARGUMENT');
      expect(err.message).toContain('idType');
    }
  });

  it('refuses createLoop inside an application transaction (CREATE TABLE would commit it)', async () => {
    const c = ctx();
    const name = freshName('tx');
    await c.session.withDriverTransaction('rollback', async (tx) => {
      await rejection(c.session.taskrow.in(tx).createLoop(name), 'INVALID_ARGUMENT');
    });
    expect(await tableExists(c, `${c.prefix}loop_${name}`)).toBe(false);
  });

  it('keeps loops apart: each has its own table', async () => {
    const c = ctx();
    const [a, b] = [await freshLoop(c), await freshLoop(c)];
    await a.add([1, 2, 3]);
    await b.add([3, 4]);
    expect(await b.get(10)).toEqual([3, 4]);
    expect(await a.get(10)).toEqual([1, 2, 3]);
    expect(await probeIds(c.session.probe, b.table)).toEqual(['3', '4']);
  });
}
