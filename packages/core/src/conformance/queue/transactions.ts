import { expect, it } from 'vitest';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeJob, probeJobs } from './probe.js';

/** Enqueues and acks through `taskrow.in(tx)` commit and roll back with the application's transaction. */
export function queueTransactions<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('a rolled-back transaction leaves no job', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const ids = await session.withDriverTransaction('rollback', async (tx) => {
      const q = session.taskrow.in(tx).queue(name);
      const res = await q.enqueueMany([{ payload: 1 }, { payload: 2, dedupKey: 'k' }]);
      expect((await q.enqueue(3, { dedupKey: 'k' })).deduplicated).toBe(true); // sees its own uncommitted job
      return res.map((r) => r.id);
    });
    expect(ids.length).toBe(2);
    expect(await probeJobs(session.probe, prefix, name)).toEqual([]);
    expect(await session.taskrow.queue(name).claim({ limit: 10, lease: 60_000 })).toEqual([]);
    expect((await session.taskrow.queue(name).enqueue(4, { dedupKey: 'k' })).deduplicated).toBe(false);
  });

  it('a committed transaction publishes its jobs at commit, not before', async () => {
    const { session, prefix } = ctx();
    const name = freshName('q');
    const outside = session.taskrow.queue<number>(name);
    const ids = await session.withDriverTransaction('commit', async (tx) => {
      const res = await session.taskrow
        .in(tx)
        .queue<number>(name)
        .enqueueMany([{ payload: 1 }, { payload: 2 }]);
      expect(await probeJobs(session.probe, prefix, name)).toEqual([]);
      expect(await outside.claim({ limit: 10, lease: 60_000 })).toEqual([]);
      return res.map((r) => r.id);
    });
    expect((await probeJobs(session.probe, prefix, name)).map((j) => j.id)).toEqual(ids);
    expect((await outside.claim({ limit: 10, lease: 60_000 })).map((j) => j.payload)).toEqual([1, 2]);
  });

  it('completes a job in the same transaction as the work it did: both commit or neither', async () => {
    const { session, prefix } = ctx();
    const [name, next] = [freshName('q'), freshName('q')];
    const q = session.taskrow.queue<number>(name);
    await q.enqueueMany([{ payload: 1 }, { payload: 2 }]);
    const [a, b] = await q.claim({ limit: 2, lease: 60_000 });
    // The work: enqueue a follow-up job; the ack commits with it.
    const work = async (tx: Tx, job: typeof a): Promise<void> => {
      const inTx = session.taskrow.in(tx);
      await inTx.queue(next).enqueue({ from: job!.id });
      await inTx.queue(name).complete(job!);
    };
    await session.withDriverTransaction('rollback', (tx) => work(tx, a));
    expect((await probeJob(session.probe, prefix, a!.id))!).toMatchObject({ state: 'running', token: a!.token });
    expect(await probeJobs(session.probe, prefix, next)).toEqual([]);
    await session.withDriverTransaction('commit', (tx) => work(tx, b));
    expect(await probeJob(session.probe, prefix, b!.id)).toBeUndefined();
    expect((await probeJobs(session.probe, prefix, next)).map((j) => j.payload)).toEqual([{ from: b!.id }]);
  });
}
