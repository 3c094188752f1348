import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import type { Job } from '../../queue/model/types.js';
import type { QueueWorker } from '../../queue/model/worker-types.js';
import { rejection } from '../expect.js';
import { makeDue, probeKeyed, probeKeyedRows, probeRunningByKey, probeTotal, until } from './probe.js';

const byPayload = (jobs: readonly Job<string>[]): string[] => jobs.map((j) => j.payload).sort();

/**
 * A ledger kept outside the database for workers of keyed jobs (payload `{ key, n }`): runs per job
 * `n`, and the most handlers of one key seen running at once. The handler takes 20 ms of work.
 */
function keyedLedger(): { handler: (job: Job<{ key: string; n: number }>) => Promise<void>; runs: Map<number, number>; most: () => number } {
  const runs = new Map<number, number>();
  const inHandler = new Map<string, number>();
  let most = 0;
  const handler = async (job: Job<{ key: string; n: number }>): Promise<void> => {
    const now = (inHandler.get(job.payload.key) ?? 0) + 1;
    inHandler.set(job.payload.key, now);
    most = Math.max(most, now);
    runs.set(job.payload.n, (runs.get(job.payload.n) ?? 0) + 1);
    await new Promise((resolve) => setTimeout(resolve, 20)); // the job's own work
    inHandler.set(job.payload.key, inHandler.get(job.payload.key)! - 1);
  };
  return { handler, runs, most: () => most };
}

/** Per-key concurrency limits: counted by the database for every process; blocked jobs admitted as slots free. */
export function queueLimits<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('holds at most the limit (default 1) of a key ready or running; the rest wait blocked and are admitted first enqueued first', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const states = async (): Promise<Record<string, string>> =>
      Object.fromEntries((await probeKeyed(session.probe, prefix, name)).map((j) => [j.payload as string, j.state]));
    await q.enqueueMany([
      ...['a1', 'a2', 'a3'].map((payload) => ({ payload, concurrencyKey: 'A' })),
      ...['b1', 'b2'].map((payload) => ({ payload, concurrencyKey: 'B' })),
      { payload: 'u' },
    ]);
    const first = await q.claim({ limit: 10, lease: 60_000 });
    expect(byPayload(first)).toEqual(['a1', 'b1', 'u']);
    expect(first.find((j) => j.payload === 'a1')!.concurrencyKey).toBe('A');
    expect(first.find((j) => j.payload === 'u')!.concurrencyKey).toBeNull();
    expect(await states()).toEqual({ a1: 'running', a2: 'blocked', a3: 'blocked', b1: 'running', b2: 'blocked', u: 'running' });
    expect((await q.stats()).counts.blocked).toBe(3);
    expect(await q.claim({ limit: 10, lease: 60_000 })).toEqual([]);
    await q.complete(first.find((j) => j.payload === 'a1')!);
    expect(await states()).toMatchObject({ a2: 'ready', a3: 'blocked', b2: 'blocked' });
    const [a2] = await q.claim({ limit: 10, lease: 60_000 });
    expect(a2!.payload).toBe('a2');
    expect((await q.getJob(a2!.id))!.concurrencyKey).toBe('A');
    // Retrying later, a job leaves its slot to the next one.
    await q.fail(a2!, new Error('try later'), { retryIn: 3_600_000 });
    expect(await states()).toMatchObject({ a2: 'delayed', a3: 'ready' });
    const [a3] = await q.claim({ limit: 10, lease: 60_000 });
    expect(a3!.payload).toBe('a3');
    // Released at once, it keeps its slot: the retry that comes due stays blocked behind it.
    await q.release(a3!);
    await makeDue(session.probe, prefix, [a2!.id]);
    expect(byPayload(await q.claim({ limit: 10, lease: 60_000 }))).toEqual(['a3']);
    expect(await states()).toMatchObject({ a2: 'blocked', a3: 'running' });
    await q.complete(first.find((j) => j.payload === 'b1')!);
    expect(await states()).toMatchObject({ b2: 'ready' });
  });

  it('setConcurrencyLimit sets a queue default and per-key overrides for every client; a raised limit admits blocked jobs at once', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    await q.enqueueMany(['A', 'B'].flatMap((k) => [1, 2, 3, 4, 5].map((i) => ({ payload: `${k}${i}`, concurrencyKey: k }))));
    const firstJobs = await q.claim({ limit: 10, lease: 60_000 });
    expect(byPayload(firstJobs)).toEqual(['A1', 'B1']);
    const active = async (key: string): Promise<string[]> =>
      (await probeKeyed(session.probe, prefix, name))
        .filter((j) => j.key === key && (j.state === 'ready' || j.state === 'running'))
        .map((j) => j.payload as string);
    await q.setConcurrencyLimit(3);
    expect(await active('A')).toEqual(['A1', 'A2', 'A3']);
    expect(await active('B')).toEqual(['B1', 'B2', 'B3']);
    await q.setConcurrencyLimit(4, { key: 'B' });
    expect(await active('B')).toEqual(['B1', 'B2', 'B3', 'B4']);
    const { clients, close } = await session.openClients(1);
    try {
      const elsewhere = clients[0]!.queue(name);
      expect(await elsewhere.getConcurrencyLimit()).toBe(3);
      expect(await elsewhere.getConcurrencyLimit({ key: 'B' })).toBe(4);
      expect(await elsewhere.getConcurrencyLimit({ key: 'A' })).toBe(3);
      await elsewhere.setConcurrencyLimit(null, { key: 'B' });
    } finally {
      await close();
    }
    expect(await q.getConcurrencyLimit({ key: 'B' })).toBe(3);
    // A lowered limit stops nothing; it admits no more until enough jobs left.
    expect(await active('B')).toEqual(['B1', 'B2', 'B3', 'B4']);
    await q.complete(firstJobs.find((j) => j.payload === 'B1')!);
    expect(await active('B')).toEqual(['B2', 'B3', 'B4']);
    const running = (await q.claim({ limit: 10, lease: 60_000 })).filter((j) => j.concurrencyKey === 'B');
    expect(byPayload(running)).toEqual(['B2', 'B3', 'B4']);
    await q.complete(running.filter((j) => j.payload !== 'B4'));
    expect(await active('B')).toEqual(['B4', 'B5']);
    await q.setConcurrencyLimit(null);
    expect(await q.getConcurrencyLimit({ key: 'A' })).toBe(1);
  });

  it('purgeKeys deletes the rows of keys with no job and no limit of their own; kept overrides hold, and a purged key starts again at the default limit', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const keyRows = async (): Promise<string[]> =>
      (await session.probe.query<{ k: string }>(`SELECT conc_key AS k FROM \`${prefix}queue_keys\` WHERE queue = ? ORDER BY conc_key`, [name])).map((r) => r.k);
    await q.setConcurrencyLimit(2, { key: 'C' });
    await q.enqueueMany(['A', 'B', 'C', 'D'].map((k) => ({ payload: `${k}1`, concurrencyKey: k })));
    await q.enqueueMany([
      { payload: 'E1', concurrencyKey: 'E' },
      { payload: 'E2', concurrencyKey: 'E' },
    ]);
    await q.enqueue('D2', { concurrencyKey: 'D', delay: 3_600_000 }); // a delayed job of D holds no slot and waits for none
    const jobs = await q.claim({ limit: 10, lease: 60_000 });
    expect(byPayload(jobs)).toEqual(['A1', 'B1', 'C1', 'D1', 'E1']); // E2 blocked
    expect(await keyRows()).toEqual(['A', 'B', 'C', 'D', 'E']);
    await q.complete(jobs.filter((j) => j.payload !== 'B1' && j.payload !== 'E1'));
    await q.fail(jobs.find((j) => j.payload === 'E1')!, new Error('again'), { retryIn: 3_600_000 }); // E1 retries later, E2 admitted
    expect(await q.purgeKeys()).toBe(2); // A and D: no job holds or waits for a slot, no limit of their own. B runs, C has its limit, E2 is ready
    expect(await keyRows()).toEqual(['B', 'C', 'E']);
    expect(await q.purgeKeys()).toBe(0);
    expect(await q.getConcurrencyLimit({ key: 'C' })).toBe(2);
    // A used again: its row comes back and the default limit (1) holds.
    await q.enqueueMany([
      { payload: 'A2', concurrencyKey: 'A' },
      { payload: 'A3', concurrencyKey: 'A' },
    ]);
    expect(byPayload(await q.claim({ limit: 10, lease: 60_000 }))).toEqual(['A2', 'E2']);
    expect(await keyRows()).toEqual(['A', 'B', 'C', 'E']);
    const c = await q.enqueueMany([
      { payload: 'C2', concurrencyKey: 'C' },
      { payload: 'C3', concurrencyKey: 'C' },
      { payload: 'C4', concurrencyKey: 'C' },
    ]);
    expect(byPayload(await q.claim({ limit: 10, lease: 60_000 }))).toEqual(['C2', 'C3']); // C's own limit, 2
    expect(c).toHaveLength(3);
  });

  it('purges running beside enqueues, claims and completions of the same keys keep every limit: at most the limit of a key runs at once, the default limit stays, every job runs once', async () => {
    const { session } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<{ key: string; n: number }>(name);
    const KEYS = 6;
    const PER_KEY = 3;
    const ROUNDS = 8;
    await q.setConcurrencyLimit(2); // the queue default's row: a purge MUST leave it
    const ledger = keyedLedger();
    const { runs } = ledger;
    let purged = 0;
    let purges = 0;
    const { clients, close } = await session.openClients(2);
    let workers: QueueWorker[] = [];
    let purging = true;
    const purger = (async () => {
      while (purging) {
        purged += await clients[1]!.queue(name).purgeKeys();
        purges += 1;
        await new Promise((resolve) => setTimeout(resolve, 5)); // paces the loop (not a wait for the database)
      }
    })();
    try {
      workers = clients.flatMap((c) =>
        Array.from({ length: 4 }, () => c.queue<{ key: string; n: number }>(name).work(ledger.handler, { concurrency: 1, batchSize: 1, pollInterval: 50 })),
      );
      // Each round: three jobs per key (the limit of 2 blocks the third); between rounds the keys
      // have no job, so the purges delete their rows while the next round makes them again.
      for (let r = 0; r < ROUNDS; r++) {
        await q.enqueueMany(
          Array.from({ length: KEYS * PER_KEY }, (_, i) => ({ payload: { key: `k${i % KEYS}`, n: r * KEYS * PER_KEY + i }, concurrencyKey: `k${i % KEYS}` })),
        );
        await until(`round ${r} ran`, () => runs.size === (r + 1) * KEYS * PER_KEY, 60);
        // The first round's keys are left without jobs until a purge deleted rows: the next round
        // then makes them again (later rounds race the purges: their completions' last commits
        // may still be in flight when the next round is enqueued).
        if (r === 0) await until('a purge deleted key rows after the first round', () => purged > 0, 60);
      }
      await Promise.all(workers.map((w) => w.stop()));
    } finally {
      purging = false;
      await purger;
      await Promise.all(workers.map((w) => w.stop()));
      await close();
    }
    expect(runs.size).toBe(ROUNDS * KEYS * PER_KEY);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(ledger.most()).toBeLessThanOrEqual(2); // never past the limit
    expect(purges).toBeGreaterThan(ROUNDS);
    expect(await q.getConcurrencyLimit()).toBe(2); // the queue default's row was never purged
  });

  it('an expired lease keeps its slot for its own retry; dying on its last attempt, the job hands it to the next', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    await q.enqueueMany([
      { payload: 'j1', concurrencyKey: 'K', maxAttempts: 2 },
      { payload: 'j2', concurrencyKey: 'K' },
    ]);
    const [j1] = await q.claim({ limit: 5, lease: 60_000 });
    expect(j1!.payload).toBe('j1');
    await makeDue(session.probe, prefix, [j1!.id]);
    const again = await q.claim({ limit: 5, lease: 60_000 });
    expect(again.map((j) => [j.payload, j.attempt])).toEqual([['j1', 2]]);
    await makeDue(session.probe, prefix, [j1!.id]);
    expect(byPayload(await q.claim({ limit: 5, lease: 60_000 }))).toEqual(['j2']);
    expect((await probeKeyed(session.probe, prefix, name)).map((j) => [j.payload, j.state])).toEqual([
      ['j1', 'dead'],
      ['j2', 'running'],
    ]);
    // Re-driven, a dead job goes through admission like any other: blocked while j2 holds the slot.
    expect(await q.retryDead()).toBe(1);
    expect(await q.claim({ limit: 5, lease: 60_000 })).toEqual([]);
    expect((await probeKeyed(session.probe, prefix, name)).map((j) => [j.payload, j.state])).toEqual([
      ['j1', 'blocked'],
      ['j2', 'running'],
    ]);
  });

  it('an ack inside the application transaction frees its slot at the commit, never after a rollback', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    await q.enqueueMany([
      { payload: 'j1', concurrencyKey: 'K' },
      { payload: 'j2', concurrencyKey: 'K' },
    ]);
    const [j1] = await q.claim({ limit: 5, lease: 60_000 });
    const states = async (): Promise<string[]> => (await probeKeyed(session.probe, prefix, name)).map((j) => j.state);
    await session.withDriverTransaction('rollback', (tx) =>
      session.taskrow
        .in(tx)
        .queue(name)
        .complete({ ...j1! }),
    );
    expect(await states()).toEqual(['running', 'blocked']);
    await session.withDriverTransaction('commit', async (tx) => {
      await session.taskrow
        .in(tx)
        .queue(name)
        .complete({ ...j1! });
      expect(await states()).toEqual(['running', 'blocked']); // not before the commit
    });
    expect(await states()).toEqual(['ready']);
  });

  it('rejects bad concurrency keys and limits, naming them, writing nothing', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const before = await probeTotal(session.probe, prefix);
    for (const [key, says] of [
      ['', 'non-empty'],
      ['k'.repeat(129), '128'],
      [7, '7'],
      ['\uD800', 'string'],
    ] as const) {
      const err = await rejection(q.enqueue('x', { concurrencyKey: key as string }), 'INVALID_KEY');
      expect(err.message).toContain('concurrencyKey');
      expect(err.message).toContain(says);
    }
    await rejection(
      q.enqueueMany([
        { payload: 1, concurrencyKey: 'ok' },
        { payload: 2, concurrencyKey: '' },
      ]),
      'INVALID_KEY',
    );
    expect(await probeTotal(session.probe, prefix)).toBe(before);
    for (const limit of [0, 1.5, '2', -1, 1_000_001, undefined]) {
      const err = await rejection(q.setConcurrencyLimit(limit as number), 'INVALID_ARGUMENT');
      expect(err.message).toContain('setConcurrencyLimit() limit');
    }
    expect((await rejection(q.setConcurrencyLimit(2, { keys: 'x' } as object), 'INVALID_ARGUMENT')).message).toContain('key');
    await rejection(q.setConcurrencyLimit(2, { key: '' }), 'INVALID_KEY');
    await rejection(q.getConcurrencyLimit({ key: 5 as unknown as string }), 'INVALID_KEY');
    const rows = await session.probe.query(`SELECT 1 FROM \`${prefix}queue_keys\` WHERE queue = ?`, [name]);
    expect(rows).toHaveLength(0);
    expect(await q.getConcurrencyLimit()).toBe(1);
  });

  it('32 workers over 20 keys with a limit of 2 never run more than 2 jobs of a key at once, run every job once and leave no key row of a job behind', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<{ key: string; n: number }>(name);
    const KEYS = 20;
    const PER_KEY = 8;
    await q.setConcurrencyLimit(2);
    await q.enqueueMany(Array.from({ length: KEYS * PER_KEY }, (_, i) => ({ payload: { key: `k${i % KEYS}`, n: i }, concurrencyKey: `k${i % KEYS}` })));
    const ledger = keyedLedger();
    const { runs } = ledger;
    let mostInDatabase = 0;
    let samples = 0;
    const { clients, close } = await session.openClients(4);
    let workers: QueueWorker[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const n of (await probeRunningByKey(session.probe, prefix, name)).values()) mostInDatabase = Math.max(mostInDatabase, n);
        samples += 1;
      }
    })();
    try {
      workers = clients.flatMap((c) =>
        Array.from({ length: 8 }, () => c.queue<{ key: string; n: number }>(name).work(ledger.handler, { concurrency: 1, batchSize: 1, pollInterval: 50 })),
      );
      await until('every job ran', () => runs.size === KEYS * PER_KEY, 120);
      await Promise.all(workers.map((w) => w.stop()));
    } finally {
      sampling = false;
      await sampler;
      await Promise.all(workers.map((w) => w.stop()));
      await close();
    }
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(ledger.most()).toBeLessThanOrEqual(2);
    expect(mostInDatabase).toBeLessThanOrEqual(2);
    expect(mostInDatabase).toBe(2); // the limit was reached, so the samples could see a breach
    expect(samples).toBeGreaterThan(5);
    expect((await probeKeyed(session.probe, prefix, name)).length).toBe(0);
    expect(await probeKeyedRows(session.probe, prefix, name)).toBe(0); // every admitted and blocked row went with its job
  });
}
