import { expect, it } from 'vitest';
import { GATE_WAIT_MS, gateSql } from '../../loop/gate.js';
import { idCodec } from '../../loop/ids.js';
import { loopSql } from '../../loop/sql.js';
import { loopTable } from '../../loop/tables.js';
import type { Loop } from '../../loop/types.js';
import { lockingSession, type SuiteContext } from '../session.js';
import type { Probe } from '../harness.js';
import { until } from '../queue/probe.js';
import { freshLoop, probeRows, range } from './probe.js';

/** Parallel getters: TASKROW_CONFORMANCE_LOOP_GETTERS, default 32, at least 16. */
function getterCount(): number {
  const n = Number(process.env['TASKROW_CONFORMANCE_LOOP_GETTERS'] ?? 32);
  return Number.isInteger(n) && n >= 16 ? n : 32;
}

/** Every id handed out, and no id twice: the union of `batches` is exactly `expected`. */
function expectDisjointUnion(batches: readonly number[][], expected: readonly number[]): void {
  const all = batches.flat();
  expect(all.length).toBe(new Set(all).size);
  expect([...all].sort((a, b) => a - b)).toEqual([...expected]);
}

/**
 * Whether another connection is running a locking read that names `table` (the processlist). A
 * primary-key read of a one-row table runs for microseconds; one that is seen running waits for a lock.
 */
async function lockingReadRunning(probe: Probe, table: string): Promise<boolean> {
  return (await lockingReadsRunning(probe, table)) > 0;
}

/**
 * How many other connections are running a locking read that names `table` (see
 * `lockingReadRunning`). MySQL 9 converts every connection's statement text to utf8mb3 to fill the
 * process list and fails the read (error 3854) while another test's statement carries a 4-byte
 * character: read again then.
 */
async function lockingReadsRunning(probe: Probe, table: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      const rows = await probe.query<{ n: unknown }>(
        "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND INFO LIKE ? AND INFO LIKE '%FOR UPDATE%'",
        [`%${table}%`],
      );
      return Number(rows[0]?.n);
    } catch (err) {
      if ((err as { errno?: unknown }).errno !== 3854 || attempt >= 100) throw err;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

/** `n` workers (each its own client) cycle get -> did over a fresh loop until it is empty: every id handed out once, every did counted, nothing left locked. */
async function cycleEveryIdOnce<Tx>(c: SuiteContext<Tx>, n: number, turns: boolean | 'auto'): Promise<void> {
  const loop = await freshLoop(c);
  const ids = range(1, 1500);
  await loop.add(ids);
  const { clients, close } = await c.session.openClients(n);
  try {
    const work = async (l: Loop<number>): Promise<{ seen: number[]; reported: number }> => {
      const seen: number[] = [];
      let reported = 0;
      for (;;) {
        const got = await l.get(10);
        if (got.length === 0) return { seen, reported };
        seen.push(...got);
        reported += await l.did(got);
      }
    };
    const results = await Promise.all(clients.map((t) => work(t.loop(loop.name, { idType: 'int', turns }))));
    expectDisjointUnion(
      results.map((r) => r.seen),
      ids,
    );
    expect(results.reduce((s, r) => s + r.reported, 0)).toBe(ids.length);
    const rows = await probeRows(c.session.probe, loop.table);
    expect(rows).toHaveLength(ids.length);
    expect(rows.filter((r) => r.lockUntil !== null || r.lastUpdated === null)).toEqual([]);
  } finally {
    await close();
  }
}

/** Many workers on separate connections at once: disjoint ids, nothing lost, nobody waits. */
export function loopConcurrency<Tx>(ctx: () => SuiteContext<Tx>): void {
  const n = getterCount();

  it(`${n} concurrent getters receive disjoint ids, and every id is handed out once`, async () => {
    const c = ctx();
    const loop = await freshLoop(c);
    const ids = range(1, 2000);
    await loop.add(ids);
    const { clients, close } = await c.session.openClients(n);
    try {
      const loops = clients.map((t) => t.loop(loop.name, { idType: 'int' }));
      const batches = await Promise.all(
        loops.map(async (l) => {
          const mine: number[] = [];
          for (;;) {
            const got = await l.get(25);
            if (got.length === 0) return mine;
            mine.push(...got);
          }
        }),
      );
      expectDisjointUnion(batches, ids);
      expect(batches.filter((b) => b.length > 0).length).toBeGreaterThan(1);
      const rows = await probeRows(c.session.probe, loop.table);
      expect(rows.filter((r) => r.lockUntil === null)).toEqual([]);
    } finally {
      await close();
    }
  });

  // Without turns and with the default adaptive turns in one case; one at a time in the other.
  const modes = [[false, 'auto'], [true]] as const;
  for (const kinds of modes)
    it(`${n} workers ${kinds[0] ? 'taking turns ' : ''}cycling get -> did process every id exactly once${kinds.length > 1 ? ', without turns and with adaptive turns' : ''}`, async () => {
      for (const turns of kinds) await cycleEveryIdOnce(ctx(), n, turns);
    });

  const skip = `${n} getters never wait on rows a getter's open transaction holds: they skip them`;
  it(skip, async () => {
    const c = ctx();
    const session = await lockingSession(c, `loop › concurrency › ${skip}`);
    const loop = await freshLoop(c);
    await loop.add(range(1, 1000));
    const { probe } = session;
    const sql = loopSql(loopTable(c.prefix, loop.name), idCodec('int'));
    const { clients, close } = await session.openClients(n);
    let finishedWhileHeld = false;
    let batches: number[][] = [];
    // The probe's connection runs get()'s own statements and keeps its transaction open, as a
    // getter between its claim and its commit (or a getter that hangs there).
    await probe.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await probe.query('START TRANSACTION');
    try {
      const held = (await probe.query<{ v: unknown }>(sql.claim(100), [3600])).map((r) => Number(r.v));
      await probe.query(sql.lock(held.length), [3600, ...held]);
      expect(held).toEqual(range(1, 100));
      const all = Promise.all(clients.map((t) => t.loop(loop.name, { idType: 'int' }).get(20)));
      finishedWhileHeld = await Promise.race([all.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
      batches = await all;
    } finally {
      await probe.query('ROLLBACK');
      await close();
    }
    expect(finishedWhileHeld).toBe(true);
    expectDisjointUnion(batches, range(101, 100 + 20 * n));
  });

  const past = 'a getter takes the free due ids that follow when every id at the front of the order is held';
  it(past, async () => {
    const c = ctx();
    const session = await lockingSession(c, `loop › concurrency › ${past}`);
    const loop = await freshLoop(c);
    await loop.add(range(1, 10)); // never updated: first in the order
    await loop.add(range(11, 20), { updated: true }); // updated now: due with minLoopTime 0, after them
    const { probe } = session;
    const sql = loopSql(loopTable(c.prefix, loop.name), idCodec('int'));
    const { clients, close } = await session.openClients(1);
    await probe.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await probe.query('START TRANSACTION');
    try {
      // The probe holds 1-10 as a getter between its claim and its commit does.
      const held = (await probe.query<{ v: unknown }>(sql.claim(10), [0])).map((r) => Number(r.v));
      expect(held).toEqual(range(1, 10));
      await probe.query(sql.lock(held.length), [3600, ...held]);
      expect(await clients[0]!.loop(loop.name, { idType: 'int' }).get(5, { minLoopTime: 0 })).toEqual(range(11, 15));
    } finally {
      await probe.query('ROLLBACK');
      await close();
    }
  });

  /**
   * Runs `fn` with a loop of ids 1-10 and `n` handles of the session's taskrow while the probe holds the loop's turn
   * (its gate), as a getter between its first read and its commit does; rolls back after (if `fn` did not).
   */
  const whileTurnHeld = async (name: string, n: number, fn: (loops: Loop<number>[], probe: Probe, prefix: string) => Promise<void>): Promise<void> => {
    const c = ctx();
    const session = await lockingSession(c, `loop › concurrency › ${name}`);
    const loop = await freshLoop(c);
    await loop.add(range(1, 10));
    await session.probe.query('START TRANSACTION');
    try {
      await session.probe.query(gateSql(c.target, c.prefix), [loop.name]);
      // Handles of one taskrow instance: its turns are the instance's, shared by its handles.
      await fn(
        Array.from({ length: n }, () => session.taskrow.loop(loop.name, { idType: 'int', turns: true })),
        session.probe,
        c.prefix,
      );
    } finally {
      await session.probe.query('ROLLBACK');
    }
  };

  const turn = 'getters that take turns (turns: true) wait while another holds the turn, then take ids';
  it(turn, async () => {
    await whileTurnHeld(turn, 1, async ([l], probe, prefix) => {
      const got = l!.get(4);
      await until('the getter waiting for its turn', () => lockingReadRunning(probe, `${prefix}loops`), (GATE_WAIT_MS / 1000) * 10);
      await probe.query('ROLLBACK'); // the turn passes on
      expect(await got).toEqual(range(1, 4));
    });
  });

  const inProcess = 'getters of one taskrow instance that take turns wait for the turn in the process: one waits on the server at a time';
  it(inProcess, async () => {
    await whileTurnHeld(inProcess, 3, async (loops, probe, prefix) => {
      const t0 = performance.now();
      const gets = Promise.all(loops.map((l) => l.get(3)));
      gets.catch(() => undefined); // awaited below, and before the clients close when a check fails
      // Until the first getter's wait on the server runs out (GATE_WAIT_MS), the others wait in the process.
      const seen: number[] = [];
      try {
        while (performance.now() - t0 < GATE_WAIT_MS * 0.8 && (seen.length === 0 || performance.now() - t0 < 400)) {
          const n = await lockingReadsRunning(probe, `${prefix}loops`);
          if (n > 0 || seen.length > 0) seen.push(n);
        }
      } finally {
        await probe.query('ROLLBACK'); // the turn passes on
        await gets.catch(() => undefined);
      }
      expect(seen.length).toBeGreaterThan(0);
      expect(Math.max(...seen)).toBe(1);
      expectDisjointUnion(await gets, range(1, 9));
    });
  });

  const stalled = 'a getter whose turn does not come within 1 s takes ids without it: a stalled holder of the turn stops no one';
  it(stalled, async () => {
    await whileTurnHeld(stalled, 2, async (loops) => {
      // Without a bound on the wait, each would wait innodb_lock_wait_timeout (50 s by default) per attempt.
      const all = Promise.all(loops.map((l) => l.get(5)));
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<'timed out'>((r) => (timer = setTimeout(() => r('timed out'), GATE_WAIT_MS * 10)));
      const batches = await Promise.race([all, bound]).finally(() => clearTimeout(timer));
      expect(batches).not.toBe('timed out');
      expect((batches as number[][]).flat().sort((a, b) => a - b)).toEqual(range(1, 10));
    });
  });
}
