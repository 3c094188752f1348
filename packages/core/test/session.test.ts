import { describe, expect, it } from 'vitest';
import { driverClient, toSqlResult, type DriverConnection, type DriverPool } from '../src/engine/driver.js';
import type { SqlClient, SqlConnection, SqlSession } from '../src/port.js';

/**
 * The order of what a kept session sends, over driver connections that log every call: a pool
 * that lends c1, c2, ... in turn and tells of waiters when the test calls `wait()`.
 */
function fixture(lost = false, silentRollback = false) {
  const log: string[] = [];
  const listeners = new Set<() => void>();
  let lent = 0;
  const connectionOf = (name: string): SqlConnection => ({
    query: async <Row>(sql: string) => {
      log.push(`${name} ${sql}`);
      return toSqlResult<Row>({ affectedRows: 0 });
    },
  });
  type Conn = DriverConnection & { name: string };
  const pool: DriverPool<Conn> = {
    ...connectionOf('pool'),
    acquire: async () => {
      const name = `c${++lent}`;
      const call = (what: string) => async () => void log.push(`${name} ${what}`);
      const rollback = silentRollback ? () => (log.push(`${name} ROLLBACK`), new Promise<void>(() => undefined)) : call('ROLLBACK');
      return { name, beginTransaction: call('BEGIN'), commit: call('COMMIT'), rollback };
    },
    release: (c, broken) => void log.push(`${broken ? 'destroy' : 'release'} ${c.name}`),
    onWait: (l) => {
      listeners.add(l);
      return () => void listeners.delete(l);
    },
  };
  const client: SqlClient = driverClient<Conn>({
    adapter: 'fake',
    describeError: () => ({ lost }),
    connectionOf: (c) => connectionOf(c.name),
    target: { pool },
  });
  const session = client.session!({ timeoutMs: 50 }) as SqlSession;
  const wait = (): void => {
    for (const l of [...listeners]) l();
  };
  return { log, session, wait, listeners };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('kept session', () => {
  it("says what its client says of interrupted statements (a producer's single enqueue is a CALL only through one that ends them)", () => {
    expect(fixture().session.endsInterrupted).toBe(true);
  });

  it('chains its transactions on one connection: isolation and BEGIN once, then COMMIT AND CHAIN each', async () => {
    const { log, session } = fixture();
    await session.transaction((c) => c.query('SELECT 1'), { isolation: 'READ COMMITTED' });
    await session.transaction((c) => c.query('SELECT 2'));
    await session.transaction((c) => c.query('SELECT 3'), { isolation: 'READ COMMITTED' });
    expect(log).toEqual([
      'c1 SET TRANSACTION ISOLATION LEVEL READ COMMITTED',
      'c1 BEGIN',
      'c1 SELECT 1',
      'c1 COMMIT AND CHAIN',
      'c1 SELECT 2',
      'c1 COMMIT AND CHAIN',
      'c1 SELECT 3',
      'c1 COMMIT AND CHAIN',
    ]);
    await session.end();
    expect(log.slice(-2)).toEqual(['c1 ROLLBACK', 'release c1']);
  });

  it('ends the chained transaction before one at another isolation level', async () => {
    const { log, session } = fixture();
    await session.transaction((c) => c.query('SELECT 1'));
    await session.transaction((c) => c.query('SELECT 2'), { isolation: 'REPEATABLE READ' });
    expect(log).toEqual([
      'c1 SET TRANSACTION ISOLATION LEVEL READ COMMITTED',
      'c1 BEGIN',
      'c1 SELECT 1',
      'c1 COMMIT AND CHAIN',
      'c1 COMMIT',
      'c1 SET TRANSACTION ISOLATION LEVEL REPEATABLE READ',
      'c1 BEGIN',
      'c1 SELECT 2',
      'c1 COMMIT AND CHAIN',
    ]);
    await session.end();
  });

  it('gives the connection back at once, its transaction ended, when the pool has a waiter between transactions', async () => {
    const { log, session, wait, listeners } = fixture();
    await session.transaction((c) => c.query('SELECT 1'));
    wait();
    await tick();
    expect(log.slice(-2)).toEqual(['c1 ROLLBACK', 'release c1']);
    expect(listeners.size).toBe(0);
    await session.transaction((c) => c.query('SELECT 2'));
    expect(log.slice(-4)).toEqual(['c2 SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'c2 BEGIN', 'c2 SELECT 2', 'c2 COMMIT AND CHAIN']);
    await session.end();
  });

  it('a waiter during a transaction: that transaction commits plainly and the connection goes back', async () => {
    const { log, session, wait } = fixture();
    await session.transaction(async (c) => {
      await c.query('SELECT 1');
      wait();
    });
    expect(log).toEqual(['c1 SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'c1 BEGIN', 'c1 SELECT 1', 'c1 COMMIT', 'release c1']);
  });

  it('a transaction asked while the kept connection is busy runs on a connection of its own', async () => {
    const { log, session } = fixture();
    let open: () => void = () => undefined;
    const held = new Promise<void>((r) => (open = r));
    const first = session.transaction(async (c) => {
      await c.query('SELECT 1');
      await held;
    });
    await tick();
    await session.transaction((c) => c.query('SELECT 2'));
    open();
    await first;
    expect(log).toEqual([
      'c1 SET TRANSACTION ISOLATION LEVEL READ COMMITTED',
      'c1 BEGIN',
      'c1 SELECT 1',
      'c2 BEGIN',
      'c2 SELECT 2',
      'c2 COMMIT',
      'release c2',
      'c1 COMMIT AND CHAIN',
    ]);
    await session.end();
  });

  it('a failed transaction rolls back and gives the connection back, destroyed when it is lost', async () => {
    for (const [lost, fate] of [
      [false, 'release c1'],
      [true, 'destroy c1'],
    ] as const) {
      const { log, session } = fixture(lost);
      await session.transaction((c) => c.query('SELECT 1'));
      const boom = new Error('boom');
      await expect(session.transaction(() => Promise.reject(boom))).rejects.toBe(boom);
      expect(log.slice(-2)).toEqual(['c1 ROLLBACK', fate]);
      await session.transaction((c) => c.query('SELECT 2'));
      expect(log.slice(-4)).toEqual(['c2 SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'c2 BEGIN', 'c2 SELECT 2', 'c2 COMMIT AND CHAIN']);
      await session.end();
    }
  });

  it('a transaction the engine stops waiting for destroys the kept connection at once', async () => {
    const { log, session } = fixture();
    const controller = new AbortController();
    const running = session.transaction(
      async (c) => {
        await c.query('SELECT 1');
        controller.abort(new Error('no answer'));
        throw new Error('no answer');
      },
      { signal: controller.signal },
    );
    await expect(running).rejects.toThrow('no answer');
    expect(log).toEqual(['c1 SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'c1 BEGIN', 'c1 SELECT 1', 'destroy c1']);
  });

  it('a transaction that never settles (a statement on a silent socket): abandoned on the abort, its connection destroyed, and end() does not wait for it', async () => {
    const { log, session } = fixture();
    const controller = new AbortController();
    const running = session.transaction(
      async (c) => {
        await c.query('SELECT 1');
        return new Promise<never>(() => undefined);
      },
      { signal: controller.signal },
    );
    await tick();
    controller.abort(new Error('no answer'));
    await expect(running).rejects.toThrow('no answer');
    await session.end();
    expect(log).toEqual(['c1 SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'c1 BEGIN', 'c1 SELECT 1', 'destroy c1']);
  });

  it('a run abandoned while it waits for the pool gives back the connection it gets, and the next run keeps its own', async () => {
    const log: string[] = [];
    let lend: (() => void) | undefined;
    const gate = new Promise<void>((r) => (lend = r));
    let lent = 0;
    type Conn = DriverConnection & { name: string };
    const connOf = (name: string): SqlConnection => ({
      query: async <Row>(sql: string) => (log.push(`${name} ${sql}`), toSqlResult<Row>({ affectedRows: 0 })),
    });
    const pool: DriverPool<Conn> = {
      ...connOf('pool'),
      acquire: async () => {
        const name = `c${++lent}`;
        if (name === 'c1') await gate; // the first lending waits for the pool
        const call = (what: string) => async () => void log.push(`${name} ${what}`);
        return { name, beginTransaction: call('BEGIN'), commit: call('COMMIT'), rollback: call('ROLLBACK') };
      },
      release: (c, broken) => void log.push(`${broken ? 'destroy' : 'release'} ${c.name}`),
      onWait: () => () => undefined,
    };
    const session = driverClient<Conn>({ adapter: 'fake', describeError: () => ({}), connectionOf: (c) => connOf(c.name), target: { pool } }).session!();
    const controller = new AbortController();
    const first = session.transaction((c) => c.query('SELECT 1'), { signal: controller.signal });
    await tick();
    controller.abort(new Error('no answer'));
    await expect(first).rejects.toThrow('no answer');
    await session.transaction((c) => c.query('SELECT 2'));
    lend!();
    await tick();
    await session.transaction((c) => c.query('SELECT 3'));
    expect(log).toEqual([
      'c2 SET TRANSACTION ISOLATION LEVEL READ COMMITTED',
      'c2 BEGIN',
      'c2 SELECT 2',
      'c2 COMMIT AND CHAIN',
      'release c1',
      'c2 SELECT 3',
      'c2 COMMIT AND CHAIN',
    ]);
    await session.end();
  });

  it('a chained transaction whose ROLLBACK gets no answer: the connection is destroyed after the bound, and end() resolves', async () => {
    const { log, session } = fixture(false, true);
    await session.transaction((c) => c.query('SELECT 1'));
    const t0 = performance.now();
    await session.end();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(45);
    expect(log.slice(-2)).toEqual(['c1 ROLLBACK', 'destroy c1']);
  });

  it('after end(), transactions go through the pool one connection each', async () => {
    const { log, session } = fixture();
    await session.end();
    await session.transaction((c) => c.query('SELECT 1'));
    expect(log).toEqual(['c1 BEGIN', 'c1 SELECT 1', 'c1 COMMIT', 'release c1']);
  });
});
