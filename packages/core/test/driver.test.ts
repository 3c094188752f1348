import { describe, expect, it } from 'vitest';
import { driverClient, toSqlResult, type DriverConnection, type DriverPool } from '../src/engine/driver.js';
import type { IsolationLevel, SqlConnection } from '../src/port.js';

/** A driver connection that writes every call it gets to a shared log. */
function fakeConnection(log: string[], name: string): DriverConnection & { valid: boolean } {
  const call = (what: string) => async () => void log.push(`${name} ${what}`);
  return { valid: true, beginTransaction: call('BEGIN'), commit: call('COMMIT'), rollback: call('ROLLBACK') };
}

function connectionOf(log: string[], name: string): SqlConnection {
  return {
    query: async <Row>(sql: string) => {
      log.push(`${name} ${sql}`);
      return toSqlResult<Row>({ affectedRows: 0 });
    },
  };
}

function poolClient(log: string[], failLost = false) {
  const conn = fakeConnection(log, 'c1');
  const pool: DriverPool<typeof conn> = {
    ...connectionOf(log, 'pool'),
    acquire: async () => conn,
    release: (_conn, broken) => void log.push(broken ? 'destroy' : 'release'),
    unusable: (c) => !c.valid,
  };
  const client = driverClient({
    adapter: 'fake',
    describeError: () => ({ lost: failLost }),
    connectionOf: () => connectionOf(log, 'c1'),
    target: { pool },
  });
  return { conn, client };
}

describe('driverClient', () => {
  it('on a pool: sets the isolation, commits, and releases the connection', async () => {
    const log: string[] = [];
    const { client } = poolClient(log);
    await client.transaction(async (c) => c.query('SELECT 1'), { isolation: 'READ COMMITTED' });
    expect(log).toEqual(['c1 SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'c1 BEGIN', 'c1 SELECT 1', 'c1 COMMIT', 'release']);
  });

  it('on a pool: rolls back, rethrows, and destroys a connection that is lost or unusable', async () => {
    for (const [lost, valid, fate] of [
      [true, true, 'destroy'],
      [false, false, 'destroy'],
      [false, true, 'release'],
    ] as const) {
      const log: string[] = [];
      const { conn, client } = poolClient(log, lost);
      conn.valid = valid;
      const boom = new Error('boom');
      await expect(client.transaction(() => Promise.reject(boom))).rejects.toBe(boom);
      expect(log).toEqual(['c1 BEGIN', 'c1 ROLLBACK', fate]);
    }
  });

  it('on a pool: a statement with a signal runs on a lent connection, destroyed at once when the signal aborts', async () => {
    const log: string[] = [];
    const { client } = poolClient(log);
    await client.query('SELECT 1', [], { signal: new AbortController().signal });
    expect(log).toEqual(['c1 SELECT 1', 'release']);
    // A statement that never answers (a silent socket): the abort gives its connection back destroyed.
    log.length = 0;
    const hanging = driverClient({
      adapter: 'fake',
      describeError: () => ({}),
      connectionOf: () => ({ query: () => (log.push('c1 SELECT SLEEP'), new Promise<never>(() => undefined)) }),
      target: {
        pool: {
          ...connectionOf(log, 'pool'),
          acquire: async () => fakeConnection(log, 'c1'),
          release: (_c, broken) => void log.push(broken ? 'destroy' : 'release'),
        },
      },
    });
    const controller = new AbortController();
    void hanging.query('SELECT SLEEP(1)', [], { signal: controller.signal });
    await new Promise((r) => setImmediate(r));
    controller.abort();
    expect(log).toEqual(['c1 SELECT SLEEP', 'destroy']);
  });

  it("on a pool: a statement the server interrupted (a CALL may leave its procedure's transaction open) destroys its connection", async () => {
    for (const [errno, fate] of [
      [1317, 'destroy'],
      [1969, 'destroy'],
      [3024, 'destroy'],
      [1062, 'release'],
    ] as const) {
      const log: string[] = [];
      const failing = driverClient({
        adapter: 'fake',
        describeError: () => ({ errno }),
        connectionOf: () => ({ query: () => (log.push('c1 CALL p()'), Promise.reject(new Error('interrupted'))) }),
        target: {
          pool: {
            acquire: async () => (log.push('acquire'), fakeConnection(log, 'c1')),
            release: (_c, broken) => void log.push(broken ? 'destroy' : 'release'),
          },
        },
      });
      expect(failing.endsInterrupted).toBe(true);
      await expect(failing.query('CALL p()')).rejects.toThrow('interrupted');
      expect(log).toEqual(['acquire', 'c1 CALL p()', fate]);
    }
  });

  it('on one connection: a statement the server interrupted is rolled back on it before the next statement', async () => {
    const log: string[] = [];
    const client = driverClient({
      adapter: 'fake',
      describeError: (err) => ({ errno: (err as { errno?: number }).errno }),
      connectionOf: () => ({
        query: async <Row>(sql: string) => {
          log.push(`c ${sql}`);
          if (sql.startsWith('CALL')) throw Object.assign(new Error('interrupted'), { errno: 1317 });
          return toSqlResult<Row>({ affectedRows: 0 });
        },
      }),
      target: { connection: fakeConnection(log, 'c') },
    });
    expect(client.endsInterrupted).toBe(true);
    await Promise.all([expect(client.query('CALL p()')).rejects.toThrow('interrupted'), client.query('SELECT 1')]);
    expect(log).toEqual(['c CALL p()', 'c ROLLBACK', 'c SELECT 1']);
  });

  it('refuses an isolation level outside IsolationLevel, sends nothing and releases the connection', async () => {
    const log: string[] = [];
    const { client } = poolClient(log);
    const isolation = 'SERIALIZABLE; DROP TABLE x' as IsolationLevel;
    await expect(client.transaction(async () => 1, { isolation })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(log).toEqual(['release']);
  });

  it('on one connection: transactions take turns', async () => {
    const log: string[] = [];
    const client = driverClient({
      adapter: 'fake',
      describeError: () => ({}),
      connectionOf: () => connectionOf(log, 'c'),
      target: { connection: fakeConnection(log, 'c') },
    });
    const run = (n: number) =>
      client.transaction(async (c) => {
        await c.query(`SELECT ${n}`);
        await new Promise((r) => setTimeout(r, 5));
        await c.query(`SELECT ${n}`);
      });
    await Promise.all([run(1), run(2)]);
    expect(log).toEqual(['c BEGIN', 'c SELECT 1', 'c SELECT 1', 'c COMMIT', 'c BEGIN', 'c SELECT 2', 'c SELECT 2', 'c COMMIT']);
  });

  it('joined: runs fn in the application transaction without BEGIN or COMMIT', async () => {
    const log: string[] = [];
    const client = driverClient({
      adapter: 'fake',
      describeError: () => ({}),
      connectionOf: () => connectionOf(log, 'x'),
      target: { joined: connectionOf(log, 'app') },
    });
    expect(client.joined).toBe(true);
    await client.transaction((c) => c.query('SELECT 1'), { isolation: 'REPEATABLE READ' });
    expect(log).toEqual(['app SELECT 1']);
  });
});

describe('toSqlResult', () => {
  it('reads rows, or an OK packet with numbers or bigints', () => {
    expect(toSqlResult([{ a: 1 }])).toEqual({ rows: [{ a: 1 }], affectedRows: 0, insertId: 0 });
    expect(toSqlResult({ affectedRows: 2n, insertId: 7n })).toEqual({ rows: [], affectedRows: 2, insertId: 7 });
    expect(toSqlResult(undefined)).toEqual({ rows: [], affectedRows: 0, insertId: 0 });
  });
});
