import { expect, it } from 'vitest';
import { MAX_PAYLOAD_BYTES } from '../../queue/model/payload.js';
import type { Enqueued } from '../../queue/model/types.js';
import { freshName, type Probe } from '../harness.js';
import { lockingSession, type SuiteContext } from '../session.js';
import { makeDue, probeJobs, probeNowMs, runningStatement, until } from './probe.js';

/** enqueue / enqueueMany: what lands in the table, verified through the probe. */
export function queueEnqueue<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('enqueues one job with its payload and defaults', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<{ n: number }>(name);
    const r = await q.enqueue({ n: 1 });
    expect(r.deduplicated).toBe(false);
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.map((j) => j.id)).toEqual([r.id]);
    const j = rows[0]!;
    expect(j).toMatchObject({
      queue: name,
      group: '',
      state: 'ready',
      priority: 0,
      attempt: 0,
      maxAttempts: 5,
      dedup: null,
      payload: { n: 1 },
      lastError: null,
    });
    expect(j.dueIn).toBeLessThanOrEqual(0);
    expect(j.dueIn).toBeGreaterThan(-30);
  });

  it('enqueues a batch in one call: ids in input order, options stored per job', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name, { maxAttempts: 7 });
    const res = await q.enqueueMany([{ payload: 'a' }, { payload: 'b', priority: -5, maxAttempts: 2, group: 'g1' }, { payload: 'c', priority: 30000 }]);
    expect(res.every((r) => !r.deduplicated)).toBe(true);
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.map((j) => j.id)).toEqual(res.map((r) => r.id));
    expect(rows.map((j) => [j.payload, j.priority, j.maxAttempts, j.group])).toEqual([
      ['a', 0, 7, ''],
      ['b', -5, 2, 'g1'],
      ['c', 30000, 7, ''],
    ]);
    expect(await q.enqueueMany([])).toEqual([]);
  });

  it('delays jobs by the database clock, or schedules them at a time', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name);
    const now = Math.floor(await probeNowMs(session.probe));
    const at = new Date(now + 7_200_000);
    const [d, t, past] = await q.enqueueMany([
      { payload: 'delay', delay: 3_600_000 },
      { payload: 'at', runAt: at },
      { payload: 'past', runAt: new Date(now - 60_000) },
    ]);
    const rows = await probeJobs(session.probe, prefix, name);
    const byId = new Map(rows.map((j) => [j.id, j]));
    expect(byId.get(d!.id)!.state).toBe('delayed');
    expect(byId.get(d!.id)!.dueIn).toBeGreaterThan(3590);
    expect(byId.get(d!.id)!.dueIn).toBeLessThanOrEqual(3600);
    expect(byId.get(t!.id)!.dueAtMs).toBe(at.getTime());
    expect(byId.get(t!.id)!.runIn).toBeCloseTo(byId.get(t!.id)!.dueIn, 6);
    // A run time in the past is due at once: only it is claimable.
    const claimed = await q.claim({ limit: 10, lease: 60_000 });
    expect(claimed.map((j) => j.id)).toEqual([past!.id]);
    expect(claimed[0]!.runAt.getTime()).toBe(now - 60_000);
    await makeDue(session.probe, prefix, [d!.id]);
    expect((await q.claim({ limit: 10, lease: 60_000 })).map((j) => j.id)).toEqual([d!.id]);
  });

  it('round-trips JSON payloads exactly, up to the size limit', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<unknown>(name);
    const payloads: unknown[] = [
      null,
      0,
      -1.5e300,
      'Ünïcødé ✓ 😀 中文 \u0000 "quoted" \\ back',
      [1, 'two', [3], { four: 4 }],
      { nested: { deep: { list: [true, false, null] } }, 'key with spaces': 'v', '': 'empty key' },
      { date: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)), skipped: undefined },
      'x'.repeat(MAX_PAYLOAD_BYTES - 2),
    ];
    // All of them in one batch, and the small ones in a batch of their own (a batch of at most 32
    // jobs and 64 KB is one CALL where the schema has it; the large payload takes the INSERT).
    for (const batch of [payloads, payloads.slice(0, -1)]) {
      const res = await q.enqueueMany(batch.map((payload) => ({ payload })));
      const expected = batch.map((p) => JSON.parse(JSON.stringify(p)) as unknown);
      expect((await probeJobs(session.probe, prefix, name)).map((j) => j.payload)).toEqual(expected);
      const claimed = await q.claim({ limit: 100, lease: 60_000 });
      expect(claimed.map((j) => j.id)).toEqual(res.map((r) => r.id));
      expect(claimed.map((j) => j.payload)).toEqual(expected);
      await session.probe.query(`DELETE FROM \`${prefix}queue_jobs\` WHERE \`queue\` = ?`, [name]);
    }
  });

  it('splits a batch larger than a server packet, all in one transaction', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    // 24 payloads of about 1 MB: over MariaDB's 16 MB default packet.
    const big = Array.from({ length: 24 }, (_, i) => ({ payload: `${i}:${'p'.repeat(MAX_PAYLOAD_BYTES - 20)}` }));
    const small = Array.from({ length: 2500 }, (_, i) => ({ payload: `s${i}` }));
    const res = await q.enqueueMany([...big, ...small]);
    expect(new Set(res.map((r) => r.id)).size).toBe(2524);
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.length).toBe(2524);
    expect(rows.map((j) => j.id)).toEqual(res.map((r) => r.id));
    expect(rows.slice(0, 24).map((j) => (j.payload as string).split(':')[0])).toEqual(big.map((_, i) => String(i)));
  });

  const killed = 'an enqueue interrupted by KILL QUERY inside its transaction leaves no job, and the next enqueue through that connection commits only its own';
  it(killed, async () => {
    // MySQL runs no handler of a procedure for KILL QUERY: a CALL killed inside the procedure's
    // transaction leaves it open (its job inserted) for the connection's next user to commit.
    const c = ctx();
    const session = await lockingSession(c, `queue › enqueue › ${killed}`);
    const { probe } = session;
    const { clients, close } = await session.openClients(1);
    // A Galera node (MariaDB 10.11.19) sometimes lets a statement killed in a row-lock wait take
    // the lock and complete (docs/compatibility.md). Such an enqueue committed whole, its job and
    // its receipt, and said so; the case then kills another one. A single server gets one try.
    const tries = c.target.multiWriterCluster ? KILL_TRIES_ON_CLUSTER : 1;
    try {
      for (let i = 1; ; i++) {
        const name = freshName('q');
        const q = clients[0]!.queue<string>(name);
        const outcome = await enqueueKilledInReceiptWait(c, probe, () => q.enqueue('killed'));
        if (!(outcome instanceof Error) && i < tries) {
          expect((await probeJobs(probe, c.prefix, name)).map((j) => j.id)).toEqual([outcome.id]);
          expect(await receiptsNaming(probe, c.prefix, outcome.id)).toBe(1);
          continue;
        }
        expect(outcome).toMatchObject({ code: 'DATABASE_ERROR', errno: 1317 });
        const next = await q.enqueue('next');
        expect((await probeJobs(probe, c.prefix, name)).map((j) => j.id)).toEqual([next.id]);
        return;
      }
    } finally {
      await close();
    }
  });
}

/** Kills per case a multi-writer cluster gets to interrupt one enqueue (see the KILL QUERY case). */
const KILL_TRIES_ON_CLUSTER = 10;

/**
 * Runs `enqueue` while the probe holds next-key locks over the whole receipts index, so the
 * enqueue's receipt INSERT, after its job's, waits for them inside the enqueue's transaction;
 * `KILL QUERY`s that INSERT and returns what the enqueue came to (its result or its error).
 */
async function enqueueKilledInReceiptWait<Tx>(c: SuiteContext<Tx>, probe: Probe, enqueue: () => Promise<Enqueued>): Promise<Enqueued | Error> {
  await probe.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
  await probe.query('BEGIN');
  try {
    await probe.query(`SELECT token FROM \`${c.prefix}receipts\` FOR UPDATE`);
    const pending = enqueue().catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
    let thread = 0;
    await until(
      'the enqueue to wait for its receipt',
      async () => (thread = await runningStatement(probe, c.target.engine, `INSERT INTO \`${c.prefix}receipts\``)) > 0,
    );
    await probe.query(`KILL QUERY ${thread}`);
    return await pending;
  } finally {
    await probe.query('ROLLBACK');
  }
}

/** Receipts whose result is `id`: the receipt an enqueue of that job committed with it. */
async function receiptsNaming(probe: Probe, prefix: string, id: number): Promise<number> {
  const rows = await probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${prefix}receipts\` WHERE \`result\` = ?`, [String(id)]);
  return Number(rows[0]!.n);
}
