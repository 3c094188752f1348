import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Taskrow } from '@taskrow/core';
import { chaosAdapters, type Opened } from './adapters.js';
import { label } from '../src/targets.js';
import { answersWithin, chaosOptions, chaosTargets, openScene, report, type Scene } from './lib.js';
import { startProxy, type LostReply, type Proxy } from './proxy.js';

// Scenario d (issue 12): the proxy forwards a COMMIT to the server and loses its reply, once, for
// each operation that must be exact across a retry: enqueue, claim, complete, Loop get, Resources
// acquire. The client either loses its connection (`close`) or hears nothing more (`silent`, where
// core's statementTimeout must abandon the statement). Afterwards the probe, on its own connection,
// must find zero duplicates and nothing stranded, and the caller must have seen no error.
const STATEMENT_TIMEOUT = 2000;
/** How long an operation may take with its reply lost: the statement bound, a reconnect, a retry. */
const ANSWER_MS = 3 * STATEMENT_TIMEOUT;

/** What one operation did, for the summary and the assertions. */
interface Outcome {
  jobs: number;
  lost: number;
  duplicated: number;
  stranded: number;
  error: string | null;
}

/** Runs `op` with its reply lost; no answer within ANSWER_MS is an error to the caller (a void result is an answer). */
async function attempt<T>(op: () => Promise<T>): Promise<{ value?: T; error: string | null }> {
  try {
    const answer = await answersWithin(
      op().then((value) => ({ value })),
      ANSWER_MS,
    );
    return answer === undefined ? { error: `no answer within ${ANSWER_MS} ms` } : { value: answer.value, error: null };
  } catch (err) {
    return { error: `${(err as { code?: string }).code ?? ''} ${(err as Error).message}`.trim() };
  }
}

for (const target of chaosTargets()) {
  for (const [adapter, then] of chaosAdapters().flatMap((a) => (['close', 'silent'] as LostReply[]).map((t) => [a, t] as const))) {
    describe(`${label(target)} · ${adapter.name} · chaos: a COMMIT's reply lost (${then})`, () => {
      let scene: Scene;
      let proxy: Proxy;
      let opened: Opened;
      let tr: Taskrow;
      beforeAll(async () => {
        scene = await openScene(target.url);
      });
      // A new proxy and pool per case: a silent connection stays stuck until the proxy closes.
      beforeEach(async () => {
        proxy = await startProxy({ host: '127.0.0.1', port: Number(new URL(target.url).port) });
        opened = await adapter.open(proxy.url(target.url), 4, chaosOptions(scene.prefix, STATEMENT_TIMEOUT));
        tr = opened.tr;
      });
      afterEach(async () => {
        await proxy?.close();
        await opened?.end();
      });
      afterAll(async () => {
        await scene?.close();
      });

      /**
       * Arms the loss of the reply of the next COMMIT of a transaction that ran a statement matching
       * `within`, or of such a statement run alone (autocommit: its reply is its commit's).
       */
      const arm = (within: RegExp): void => proxy.loseReplies({ count: 1, then, within, autocommit: within });
      const summary = (op: string, o: Outcome): void => {
        report({
          scenario: `d lost COMMIT reply (${then}) · ${op}`,
          server: `${target.engine} ${target.version}`,
          adapter: adapter.name,
          jobs: o.jobs,
          kills: proxy.counters.lostReplies,
          restarts: 0,
          lost: o.lost,
          duplicated: o.duplicated,
          doubleCompletions: 0,
          errors: o.error ? 1 : 0,
          note: `stranded ${o.stranded}${o.error ? `; caller saw: ${o.error.slice(0, 160)}` : ''}`,
        });
      };
      const expectClean = (o: Outcome): void => {
        expect(proxy.counters.lostReplies, 'the proxy lost a reply').toBe(1);
        expect(o.error, 'error surfaced to the caller').toBeNull();
        expect(o.duplicated, 'jobs inserted twice').toBe(0);
        expect(o.lost, 'items lost').toBe(0);
        expect(o.stranded, 'left leased / locked').toBe(0);
      };

      /** Jobs of `queue` per payload `seq`, read by the probe. */
      const seqCounts = async (queue: string): Promise<Map<number, number>> => {
        const rows = await scene.probe<{ payload: string }>(`SELECT payload FROM ${scene.table('queue_jobs')} WHERE queue = ?`, [queue]);
        const counts = new Map<number, number>();
        for (const r of rows) {
          const seq = (JSON.parse(r.payload) as { seq: number }).seq;
          counts.set(seq, (counts.get(seq) ?? 0) + 1);
        }
        return counts;
      };

      it('enqueueMany and enqueue: each job stored once, no error', async () => {
        const q = tr.queue<{ seq: number }>('enq');
        // A batch of 20 is one CALL too (`enqueue_jobs`, schema 19): that statement's reply is lost.
        arm(/enqueue_jobs/);
        const many = await attempt(() => q.enqueueMany(Array.from({ length: 20 }, (_, i) => ({ payload: { seq: i } }))));
        // A single job is one CALL (its transaction runs inside the procedure): that statement's reply is lost.
        arm(/enqueue_job/);
        const one = await attempt(() => q.enqueue({ seq: 20 }));
        const counts = await seqCounts('enq');
        const o: Outcome = {
          jobs: 21,
          lost: Array.from({ length: 21 }, (_, i) => i).filter((i) => !counts.has(i)).length,
          duplicated: [...counts.values()].reduce((n, c) => n + c - 1, 0),
          stranded: 0,
          error: many.error ?? one.error,
        };
        summary('enqueue', o);
        expect(proxy.counters.lostReplies).toBe(2);
        expect(o.error).toBeNull();
        expect(o.duplicated).toBe(0);
        expect(o.lost).toBe(0);
        expect(many.value?.map((r) => r.id)).toHaveLength(20);
      });

      it('claim: the retry returns the jobs the lost attempt took, attempt counted once', async () => {
        const ids = (await scene.tr.queue('claim').enqueueMany(Array.from({ length: 5 }, (_, i) => ({ payload: { seq: i } })))).map((r) => r.id);
        // A claim is one CALL (`claim_jobs`, schema 20): that statement's reply is lost.
        arm(/claim_jobs|queue_jobs/);
        const res = await attempt(() => tr.queue('claim').claim({ limit: 5, lease: 60_000 }));
        const got = new Set((res.value ?? []).map((j) => j.id));
        const running = await scene.probe<{ id: number; attempt: number }>(
          `SELECT id, attempt FROM ${scene.table('queue_jobs')} WHERE queue = 'claim' AND phase = 2`,
        );
        const o: Outcome = {
          jobs: 5,
          lost: ids.filter((id) => !got.has(id)).length,
          duplicated: 0,
          stranded: running.filter((r) => !got.has(Number(r.id))).length,
          error: res.error,
        };
        summary('claim', o);
        expectClean(o);
        expect(running.map((r) => Number(r.attempt))).toEqual([1, 1, 1, 1, 1]);
        await tr.queue('claim').complete(res.value!);
      });

      it('complete: the retry reports the jobs done (no LEASE_LOST), none left', async () => {
        await scene.tr.queue('done').enqueueMany(Array.from({ length: 5 }, (_, i) => ({ payload: { seq: i } })));
        const jobs = await tr.queue('done').claim({ limit: 5, lease: 60_000 });
        expect(jobs).toHaveLength(5);
        // A completion is a transaction: the reply of its COMMIT is lost.
        arm(/queue_jobs/);
        const res = await attempt(() => tr.queue('done').complete(jobs));
        const left = (await seqCounts('done')).size;
        const o: Outcome = { jobs: 5, lost: 0, duplicated: 0, stranded: left, error: res.error };
        summary('complete', o);
        expectClean(o);
      });

      it('Loop get: the retry returns the ids the lost attempt locked, none left locked', async () => {
        const loop = await scene.tr.createLoop('chaosd');
        await loop.add(Array.from({ length: 20 }, (_, i) => i + 1));
        arm(/loop_chaosd/);
        const res = await attempt(() => tr.loop('chaosd').get(5));
        const got = new Set(res.value ?? []);
        const locked = await scene.probe<{ id: number }>(`SELECT id FROM ${scene.table('loop_chaosd')} WHERE lock_until > UNIX_TIMESTAMP()`);
        const o: Outcome = { jobs: 5, lost: 5 - got.size, duplicated: 0, stranded: locked.filter((r) => !got.has(Number(r.id))).length, error: res.error };
        summary('Loop get', o);
        expectClean(o);
        expect(locked).toHaveLength(5);
      });

      it('Resources acquire: the retry finds its own locks, none held by another holder', async () => {
        const res = tr.resources({ history: false, releaseOnExit: false });
        const job = res.job('chaosd', { inputs: [], outputs: ['chaos.d.out1', 'chaos.d.out2'], lease: 60_000 });
        arm(/resource_locks/);
        const got = await attempt(() => job.acquire());
        const holders = await scene.probe<{ h: string }>(`SELECT LOWER(HEX(holder)) AS h FROM ${scene.table('resource_locks')}`);
        const mine = holders.filter((r) => job.held && r.h === job.id?.toLowerCase()).length;
        const o: Outcome = { jobs: 2, lost: 2 - mine, duplicated: 0, stranded: holders.length - mine, error: got.error };
        summary('Resources acquire', o);
        expectClean(o);
        await job.release();
        expect(await scene.probe(`SELECT 1 FROM ${scene.table('resource_locks')}`)).toHaveLength(0);
      });
    });
  }
}
