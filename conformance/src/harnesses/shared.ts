import type { Taskrow } from '@taskrow/core';
import type { HarnessSession, Probe } from '@taskrow/core/conformance';

/** Opens `n` clients with at most `width` handshakes in flight; on a failure closes what opened and rethrows. */
export async function openEach<C>(n: number, open: () => Promise<C>, close: (c: C) => Promise<unknown>, width = 100): Promise<C[]> {
  const out: C[] = [];
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: Math.min(width, n) }, async () => {
        while (next < n) {
          next += 1;
          out.push(await open());
        }
      }),
    );
  } catch (err) {
    await Promise.allSettled(out.map(close));
    throw err;
  }
  return out;
}

/** KILLs every server thread in `threadIds` through the probe; returns how many were killed and forgets them. */
export async function killThreads(probe: Probe, threadIds: Set<number>): Promise<number> {
  let killed = 0;
  for (const id of threadIds) {
    await probe.query(`KILL ${Number(id)}`).then(
      () => (killed += 1),
      () => undefined,
    );
  }
  threadIds.clear();
  return killed;
}

/** A driver connection with its own transaction API (mysql2, mariadb). */
export interface TransactionalConnection {
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** Runs `fn` between the driver's own BEGIN and COMMIT (or ROLLBACK, as `outcome` says); rolls back when `fn` throws. */
export async function driverTransaction<T>(conn: TransactionalConnection, outcome: 'commit' | 'rollback', fn: () => Promise<T>): Promise<T> {
  await conn.beginTransaction();
  try {
    const value = await fn();
    await (outcome === 'commit' ? conn.commit() : conn.rollback());
    return value;
  } catch (err) {
    await conn.rollback().catch(() => undefined);
    throw err;
  }
}

/** What a harness supplies for one session; `harnessSession` builds the rest. */
export interface SessionParts<Tx, C> {
  readonly taskrow: Taskrow<Tx>;
  readonly probe: Probe & { end(): Promise<void> };
  /** Server thread ids of the session client's connections, filled by the library's own hook. */
  readonly threadIds: Set<number>;
  readonly withDriverTransaction: HarnessSession<Tx>['withDriverTransaction'];
  /** Opens one single-connection client of the library (for `openClients`). */
  openOne(): Promise<C>;
  connect(client: C): Promise<Taskrow<Tx>>;
  closeOne(client: C): Promise<unknown>;
  /** Ends the session's own client (`pool.end()`, `knex.destroy()`, ...). */
  end(): Promise<void>;
}

/** A `HarnessSession` from its parts: many single-connection clients, KILL by thread id, end and close. */
export function harnessSession<Tx, C>(p: SessionParts<Tx, C>): HarnessSession<Tx> {
  let ended = false;
  return {
    taskrow: p.taskrow,
    probe: p.probe,
    withDriverTransaction: p.withDriverTransaction,
    async openClients(n) {
      // Open and connect each client within the bounded window: a thousand handshakes at once time out on two cores.
      const open = async (): Promise<{ one: C; tr: Taskrow<Tx> }> => {
        const one = await p.openOne();
        try {
          return { one, tr: await p.connect(one) };
        } catch (err) {
          await p.closeOne(one).catch(() => undefined);
          throw err;
        }
      };
      const many = await openEach(n, open, ({ one }) => p.closeOne(one));
      return {
        clients: many.map(({ tr }) => tr),
        close: async () => void (await Promise.allSettled(many.map(({ one }) => p.closeOne(one)))),
      };
    },
    killClientConnections: () => killThreads(p.probe, p.threadIds),
    async endClient() {
      ended = true;
      await p.end();
    },
    async close() {
      if (!ended) await p.end().catch(() => undefined);
      await p.probe.end();
    },
  };
}

/** Thrown inside a library's transaction callback to make the library roll back; caught by `libraryTransaction`. */
class Rollback<T> {
  constructor(readonly value: T) {}
}

/**
 * Runs `fn` in a transaction the library opens with `run` (`knex.transaction(cb)`,
 * `db.transaction().execute(cb)`): the library commits when `fn` returns, or rolls back when
 * `outcome` is 'rollback', by throwing a sentinel out of its callback (caught here).
 */
export async function libraryTransaction<Tx, T>(
  run: (body: (tx: Tx) => Promise<T>) => Promise<T>,
  outcome: 'commit' | 'rollback',
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  try {
    return await run(async (tx) => {
      const value = await fn(tx);
      if (outcome === 'rollback') throw new Rollback(value);
      return value;
    });
  } catch (err) {
    if (err instanceof Rollback) return err.value as T;
    throw err;
  }
}

/**
 * `list` starting at position `offset` (wrapping around): adapter files running side by side start
 * on different servers, so the servers share the load instead of all files queueing on the first.
 */
export function startingAt<T>(list: readonly T[], offset: number): T[] {
  const k = list.length === 0 ? 0 : offset % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}
