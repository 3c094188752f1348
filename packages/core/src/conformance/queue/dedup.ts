import { expect, it } from 'vitest';
import type { Enqueued } from '../../queue/model/types.js';
import { freshName } from '../harness.js';
import { lockingSession, type SuiteContext } from '../session.js';
import { makeDue, probeDirtyPayloads, probeJobs, until } from './probe.js';

/** A dedup key admits one live (ready, delayed or running) job per queue. */
export function queueDedup<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('a second enqueue with the key is a no-op while the job is pending or running, not after it finishes', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const first = await q.enqueue('v1', { dedupKey: 'report:2024-01-01', delay: 60_000 });
    expect(await q.enqueue('v2', { dedupKey: 'report:2024-01-01' })).toEqual({ id: first.id, deduplicated: true });
    await makeDue(session.probe, prefix, [first.id]);
    const [job] = await q.claim({ limit: 1, lease: 60_000 });
    expect(job!.payload).toBe('v1');
    expect(await q.enqueue('v3', { dedupKey: 'report:2024-01-01' })).toEqual({ id: first.id, deduplicated: true });
    expect((await probeJobs(session.probe, prefix, name)).map((j) => [j.payload, j.dedup])).toEqual([['v1', 'report:2024-01-01']]);
    await q.complete(job!);
    const again = await q.enqueue('v4', { dedupKey: 'report:2024-01-01' });
    expect(again.deduplicated).toBe(false);
    expect(again.id).not.toBe(first.id);
    expect((await probeJobs(session.probe, prefix, name)).map((j) => j.payload)).toEqual(['v4']);
  });

  it('retryDead() gives a dead job its key back, and leaves it dead while a live job holds the key', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const failed = await q.enqueue('failed', { dedupKey: 'k1', maxAttempts: 1 });
    const expired = await q.enqueue('expired', { dedupKey: 'k2', maxAttempts: 1 });
    const jobs = await q.claim({ limit: 2, lease: 60_000 });
    await q.fail(jobs.find((j) => j.payload === 'failed')!, 'no');
    // The other one's lease expires on its last attempt: the next claim makes it dead.
    await makeDue(session.probe, prefix, [expired.id]);
    expect(await q.claim({ limit: 1, lease: 60_000 })).toEqual([]);
    expect((await probeJobs(session.probe, prefix, name)).map((j) => [j.payload, j.state, j.dedup])).toEqual([
      ['failed', 'dead', null],
      ['expired', 'dead', null],
    ]);
    const live = await q.enqueue('live', { dedupKey: 'k1' });
    expect(live.deduplicated).toBe(false);
    // k1 is taken by a live job: only the job of k2 is re-driven.
    expect(await q.retryDead()).toBe(1);
    const byPayload = async (): Promise<Record<string, [string, string | null]>> =>
      Object.fromEntries((await probeJobs(session.probe, prefix, name)).map((j) => [j.payload as string, [j.state, j.dedup]]));
    expect(await byPayload()).toEqual({ failed: ['dead', null], expired: ['ready', 'k2'], live: ['ready', 'k1'] });
    expect(await q.retryDead({ ids: [failed.id] })).toBe(0);
    // Once the live job is done, the key is free and the dead job gets it back.
    const [l] = (await q.claim({ limit: 3, lease: 60_000 })).filter((j) => j.payload === 'live');
    await q.complete(l!);
    expect(await q.retryDead({ ids: [failed.id] })).toBe(1);
    expect((await byPayload())['failed']).toEqual(['ready', 'k1']);
  });

  it('frees the key when the job dies or is kept as done', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue(name, { keepFinishedFor: 3_600_000 });
    await q.enqueue('a', { dedupKey: 'k-dead', maxAttempts: 1 });
    await q.enqueue('b', { dedupKey: 'k-done' });
    const jobs = await q.claim({ limit: 2, lease: 60_000 });
    await q.fail(jobs.find((j) => j.payload === 'a')!, 'no');
    await q.complete(jobs.find((j) => j.payload === 'b')!);
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.map((j) => [j.state, j.dedup])).toEqual([
      ['dead', null],
      ['done', null],
    ]);
    const res = await q.enqueueMany([
      { payload: 'a2', dedupKey: 'k-dead' },
      { payload: 'b2', dedupKey: 'k-done' },
    ]);
    expect(res.map((r) => r.deduplicated)).toEqual([false, false]);
  });

  it('dedups within one batch and against live jobs, keeping input order', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const live = await q.enqueue('live', { dedupKey: 'L' });
    const res = await q.enqueueMany([
      { payload: 'dup-of-live', dedupKey: 'L' },
      { payload: 'x1', dedupKey: 'X' },
      { payload: 'plain' },
      { payload: 'x2', dedupKey: 'X' },
      { payload: 'y', dedupKey: 'Y' },
    ]);
    expect(res[0]).toEqual({ id: live.id, deduplicated: true });
    expect(res[1]!.deduplicated).toBe(false);
    expect(res[3]).toEqual({ id: res[1]!.id, deduplicated: true });
    expect(res[2]!.deduplicated).toBe(false);
    expect(res[4]!.deduplicated).toBe(false);
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.map((j) => [j.id, j.payload])).toEqual([
      [live.id, 'live'],
      [res[1]!.id, 'x1'],
      [res[2]!.id, 'plain'],
      [res[4]!.id, 'y'],
    ]);
  });

  it('treats keys as exact strings and scopes them to the queue', async () => {
    const { session, prefix } = ctx();
    const [name, other] = [freshName('q'), freshName('q')];
    const q = session.taskrow.queue(name);
    const res = await q.enqueueMany(['a', 'A', 'a ', 'a\t', '😀'].map((k) => ({ payload: k, dedupKey: k })));
    expect(res.every((r) => !r.deduplicated)).toBe(true);
    expect((await session.taskrow.queue(other).enqueue('same key, other queue', { dedupKey: 'a' })).deduplicated).toBe(false);
    expect((await probeJobs(session.probe, prefix, name)).length).toBe(5);
  });

  it('admits one job when many clients enqueue the same key at once', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const { clients, close } = await session.openClients(8);
    try {
      const results = await Promise.all(
        clients.map((c, i) =>
          c.queue(name).enqueueMany([
            { payload: `c${i}`, dedupKey: 'shared' },
            { payload: `own${i}`, dedupKey: `own${i}` },
          ]),
        ),
      );
      const shared = results.map((r) => r[0]!);
      expect(new Set(shared.map((r) => r.id)).size).toBe(1);
      expect(shared.filter((r) => !r.deduplicated).length).toBe(1);
      expect(results.every((r) => !r[1]!.deduplicated)).toBe(true);
      const rows = await probeJobs(session.probe, prefix, name);
      expect(rows.length).toBe(9);
      expect(rows.filter((j) => j.dedup === 'shared').map((j) => j.id)).toEqual([shared[0]!.id]);
    } finally {
      await close();
    }
  });

  const waited = 'keeps every new row of a batch that waited on a key while another client took its next key';
  it(waited, async () => {
    // B's batch reserves its ids, then waits on a key an open transaction holds; meanwhile A takes
    // B's second key (with ids above B's) and commits. B's second row must dedup to A's job and its
    // third row must still be inserted as B's own job, not merged into one of A's rows.
    const c = ctx();
    const { prefix } = c;
    const session = await lockingSession(c, `queue › dedup › ${waited}`);
    const name = freshName('q');
    const { clients, close } = await session.openClients(2);
    const [a, b] = [clients[0]!.queue<string>(name), clients[1]!.queue<string>(name)];
    try {
      let fromA: Enqueued[] = [];
      const pending = await session.withDriverTransaction('rollback', async (tx) => {
        await session.taskrow.in(tx).queue(name).enqueue('held', { dedupKey: 'k1-held' });
        const fromB = b.enqueueMany([
          { payload: 'b-held', dedupKey: 'k1-held' },
          { payload: 'b-shared', dedupKey: 'k2-shared' },
          { payload: 'b-own', dedupKey: 'k3-own-b' },
        ]);
        fromB.catch(() => undefined); // awaited below, after the rollback frees its key
        // Its first row is written (ids reserved) and it waits for the held key.
        await until('the second client to write its first row', async () => (await probeDirtyPayloads(session.probe, prefix, name)).includes('b-held'));
        fromA = await a.enqueueMany([
          { payload: 'a-shared', dedupKey: 'k2-shared' },
          { payload: 'a-own', dedupKey: 'k3-own-a' },
        ]);
        return { fromB };
      });
      const fromB = await pending.fromB;
      expect(fromB[0]!.id).toBeLessThan(fromA[0]!.id); // B's ids were reserved first
      expect(fromA.map((r) => r.deduplicated)).toEqual([false, false]);
      expect(fromB.map((r) => r.deduplicated)).toEqual([false, true, false]);
      expect(fromB[1]!.id).toBe(fromA[0]!.id);
      const rows = await probeJobs(session.probe, prefix, name);
      expect(rows.map((j) => [j.id, j.payload, j.dedup]).sort((x, y) => Number(x[0]) - Number(y[0]))).toEqual(
        [
          [fromA[0]!.id, 'a-shared', 'k2-shared'],
          [fromA[1]!.id, 'a-own', 'k3-own-a'],
          [fromB[0]!.id, 'b-held', 'k1-held'],
          [fromB[2]!.id, 'b-own', 'k3-own-b'],
        ].sort((x, y) => Number(x[0]) - Number(y[0])),
      );
    } finally {
      await close();
    }
  });

  it('admits one job when many clients enqueue a key whose last job finished', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const first = await q.enqueue('first', { dedupKey: 'again' });
    await q.complete(await q.claim({ limit: 1, lease: 60_000 }));
    const { clients, close } = await session.openClients(8);
    try {
      // On a cluster the clients' nodes may apply the completion a moment later.
      await until('every client to see the first job gone', async () =>
        (await Promise.all(clients.map((c) => c.queue(name).getJob(first.id)))).every((j) => j === null),
      );
      const results = await Promise.all(clients.map((c, i) => c.queue<string>(name).enqueue(`c${i}`, { dedupKey: 'again' })));
      expect(new Set(results.map((r) => r.id)).size).toBe(1);
      expect(results.filter((r) => !r.deduplicated).length).toBe(1);
      expect((await probeJobs(session.probe, prefix, name)).map((j) => [j.id, j.state, j.dedup])).toEqual([[results[0]!.id, 'ready', 'again']]);
    } finally {
      await close();
    }
  });

  it('retryDead() re-drives one of two dead jobs that had the same key', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const a = await q.enqueue('a', { dedupKey: 'k', maxAttempts: 1 });
    await q.fail((await q.claim({ limit: 1, lease: 60_000 }))[0]!, 'no');
    const b = await q.enqueue('b', { dedupKey: 'k', maxAttempts: 1 });
    expect(b.deduplicated).toBe(false);
    await q.fail((await q.claim({ limit: 1, lease: 60_000 }))[0]!, 'no');
    expect(await q.retryDead({ ids: [a.id, b.id] })).toBe(1);
    const rows = await probeJobs(session.probe, prefix, name);
    expect(rows.map((j) => j.state).sort()).toEqual(['dead', 'ready']);
    const live = rows.find((j) => j.state === 'ready')!;
    expect(live.dedup).toBe('k');
    expect(await q.enqueue('c', { dedupKey: 'k' })).toEqual({ id: live.id, deduplicated: true });
  });

  it('purgeKeys() deletes the rows of keys whose job finished or died, never of a live job', async () => {
    const { session } = ctx();
    const name = freshName('q');
    const q = session.taskrow.queue<string>(name);
    const [, b, c] = await q.enqueueMany(['a', 'b', 'c'].map((k) => ({ payload: k, dedupKey: k, maxAttempts: 1 })));
    const jobs = await q.claim({ limit: 3, lease: 60_000 });
    await q.complete(jobs.find((j) => j.payload === 'a')!);
    await q.fail(jobs.find((j) => j.payload === 'b')!, 'no');
    expect(await q.purgeKeys()).toBe(2);
    expect(await q.purgeKeys()).toBe(0);
    expect(await q.enqueue('c2', { dedupKey: 'c' })).toEqual({ id: c!.id, deduplicated: true });
    expect((await q.enqueue('a2', { dedupKey: 'a' })).deduplicated).toBe(false);
    expect(await q.retryDead({ ids: [b!.id] })).toBe(1);
    expect((await q.enqueue('b2', { dedupKey: 'b' })).id).toBe(b!.id);
  });

  const purging = 'purges beside enqueues, claims and completions of the same keys never leave two live jobs with one key';
  it(purging, async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const keys = ['k0', 'k1', 'k2', 'k3'];
    const { clients, close } = await session.openClients(4);
    const ledger = { made: 0, completed: 0, purged: 0 };
    const doubled: unknown[] = [];
    let enqueuing = 2;
    try {
      const enqueuers = [0, 1].map(async (p) => {
        const cq = clients[p]!.queue<string>(name);
        for (let i = 0; i < 200; i++) if (!(await cq.enqueue(`p${p}-${i}`, { dedupKey: keys[(i * 7 + p) % keys.length]! })).deduplicated) ledger.made += 1;
        enqueuing -= 1;
      });
      const completer = (async () => {
        const cq = clients[2]!.queue(name);
        while (enqueuing > 0) {
          const got = await cq.claim({ limit: 2, lease: 60_000 });
          if (got.length > 0) await cq.complete(got);
          ledger.completed += got.length;
        }
      })();
      const purger = (async () => {
        const cq = clients[3]!.queue(name);
        while (enqueuing > 0) ledger.purged += await cq.purgeKeys();
      })();
      const prober = (async () => {
        while (enqueuing > 0) {
          doubled.push(
            ...(await session.probe.query(
              `SELECT dedup_k, COUNT(*) AS n FROM \`${prefix}queue_jobs\` WHERE queue = ? AND dedup_k IS NOT NULL GROUP BY dedup_k HAVING COUNT(*) > 1`,
              [name],
            )),
          );
        }
      })();
      await Promise.all([...enqueuers, completer, purger, prober]);
    } finally {
      await close();
    }
    expect(doubled).toEqual([]);
    expect(ledger.purged).toBeGreaterThan(0);
    const rows = await probeJobs(session.probe, prefix, name);
    // Every job made is either completed (and gone) or still live, once.
    expect(ledger.made).toBe(ledger.completed + rows.length);
    expect(new Set(rows.map((j) => j.dedup)).size).toBe(rows.length);
  });
}
