import { describe, expect, it } from 'vitest';
import { createTaskrow, TaskrowError, type SqlClient, type Taskrow } from '../src/index.js';
import { encodeBatch, idBatch, idCodec, parseIdType } from '../src/loop/ids.js';
import { loopSql } from '../src/loop/sql.js';
import { loopTable } from '../src/loop/tables.js';

/**
 * A client that answers only the connect-time queries and records every other statement,
 * failing it: these tests prove that some calls issue no statement at all. Nothing here stands in
 * for the database's behaviour; the conformance kit runs everything else on real servers.
 */
function countingClient(): { client: SqlClient; statements: string[] } {
  const statements: string[] = [];
  const client: SqlClient = {
    adapter: 'counting',
    joined: false,
    describeError: () => ({}),
    async query<Row>(sql: string) {
      if (sql.startsWith('SELECT VERSION()')) return { rows: [{ v: '8.4.0', p: 67108864 }] as Row[], affectedRows: 0, insertId: 0 };
      // The connect-time cluster probe (dialect.ts): no group member, no Galera.
      if (sql.startsWith('SELECT VARIABLE_VALUE')) return { rows: [] as Row[], affectedRows: 0, insertId: 0 };
      // The connect-time schema check (schema/compat.ts): a schema this build may use.
      if (sql.includes('schema_migrations')) return { rows: [{ v: 1, m: 1 }] as Row[], affectedRows: 0, insertId: 0 };
      statements.push(sql);
      throw new Error(`unexpected statement: ${sql}`);
    },
    async transaction() {
      statements.push('BEGIN');
      throw new Error('unexpected transaction');
    },
  };
  return { client, statements };
}

async function setup(): Promise<{ tr: Taskrow; statements: string[] }> {
  const { client, statements } = countingClient();
  const tr = await createTaskrow({ client, joinTransaction: () => client });
  return { tr, statements };
}

async function code(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TaskrowError);
    return (err as TaskrowError).code;
  }
  return undefined;
}

describe('loop: calls that need no statement issue none', () => {
  it('limit 0 and empty id lists, with or without a declared id type', async () => {
    const { tr, statements } = await setup();
    for (const loop of [tr.loop('a'), tr.loop('b', { idType: 'int' }), tr.loop('c', { idType: { string: 8 } })]) {
      expect(await loop.get(0)).toEqual([]);
      expect(await loop.get(0, { lockFor: 10_000, minLoopTime: 0, dryRun: true })).toEqual([]);
      expect(await loop.add([])).toBe(0);
      expect(await loop.remove(new Set())).toBe(0);
      expect(await loop.did([], { autoAdd: false })).toBe(0);
      expect(await loop.unlock((function* () {})())).toBe(0);
      expect(await loop.bump([], { lockFor: -60_000 })).toBe(0);
      expect(await loop.check([])).toEqual(new Map());
    }
    expect(statements).toEqual([]);
  });

  it('bad arguments and ids of a declared type are rejected before any statement', async () => {
    const { tr, statements } = await setup();
    const loop = tr.loop('a', { idType: 'int' });
    expect(await code(loop.get(5, { lockFor: 0 }))).toBe('INVALID_ARGUMENT');
    expect(await code(loop.get(-1))).toBe('INVALID_ARGUMENT');
    expect(await code(loop.get(5, { minLoopTime: NaN }))).toBe('INVALID_ARGUMENT');
    expect(await code(loop.bump(1, { lockFor: Infinity }))).toBe('INVALID_ARGUMENT');
    expect(await code(loop.add([1, 'x' as never]))).toBe('INVALID_ARGUMENT');
    expect(await code(loop.did(2 ** 31))).toBe('INVALID_ARGUMENT');
    expect(await code(tr.loop('s', { idType: { string: 3 } }).add('abcd'))).toBe('INVALID_ARGUMENT');
    expect(() => tr.loop('Bad-Name')).toThrow(TaskrowError);
    expect(statements).toEqual([]);
  });
});

describe('loop: ids', () => {
  it('parses the three id types and nothing else', () => {
    expect(parseIdType('int')).toBe('int');
    expect(parseIdType('bigint')).toBe('bigint');
    expect(parseIdType({ string: 3072 })).toEqual({ string: 3072 });
    for (const bad of ['INT', 'varchar(10)', { string: 0 }, { string: 3073 }, { string: 2.5 }, { string: 5, x: 1 }, null, 7]) {
      expect(() => parseIdType(bad)).toThrow(TaskrowError);
    }
  });

  it('drops duplicates and sorts in primary-key order (numeric, bigint, bytes)', () => {
    expect(encodeBatch(idCodec('int'), idBatch([10, 9, 10, -1])).map((e) => e.id)).toEqual([-1, 9, 10]);
    expect(encodeBatch(idCodec('bigint'), idBatch([10n, 9, 2n ** 62n, 10])).map((e) => e.id)).toEqual([9n, 10n, 2n ** 62n]);
    expect(encodeBatch(idCodec({ string: 8 }), idBatch(['b', 'a', 'B', 'a '])).map((e) => e.id)).toEqual(['B', 'a', 'a ', 'b']);
    expect(idBatch('abc')).toEqual({ items: ['abc'], single: true });
  });

  it('names the offending id and its position', () => {
    expect(() => encodeBatch(idCodec('int'), idBatch([1, 2, 1.5]))).toThrow(/id #2 1\.5/);
    expect(() => encodeBatch(idCodec({ string: 2 }), idBatch('abc'))).toThrow(/"abc" is 3 UTF-8 bytes/);
  });
});

describe('loop: statements', () => {
  it('take no table lock and no named lock; get skips locked rows in both steps', () => {
    const sql = loopSql(loopTable('t_', 'x'), idCodec('int'));
    const all = [
      sql.add(2, true),
      sql.remove(2),
      sql.ensure(2),
      sql.didUpsert(2),
      sql.did(2),
      sql.unlockUpsert(2),
      sql.unlock(2),
      sql.bump(2),
      sql.claim(10),
      sql.lock(2),
      sql.check(2),
      sql.stats(),
    ].join('\n');
    expect(all).not.toMatch(/LOCK TABLES|GET_LOCK|LOCK IN SHARE MODE/i);
    expect(sql.claim(10).match(/FOR UPDATE SKIP LOCKED/g)).toHaveLength(2);
    expect(sql.claim(10)).toContain('ORDER BY `lock_until`, `last_updated`, `id`');
  });
});
