import { appendFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Job } from '@taskrow/core';
import { until } from '@taskrow/core/conformance';
import { taskrow } from '@taskrow/mysql2';
import { startCluster, type ClusterKind } from '@taskrow/servers';
import { failoverPool } from '../src/failover-pool.js';

// Failover run on a 3-node cluster (Köhntopp's queue scenario: 2 producers, 10 consumers), outside
// the unit suite: `pnpm crash cluster-failover`. Producers and consumers each have their own node
// (spread over the three) and move to a surviving node through the application's failover pool
// (src/failover-pool.ts). When a third of the jobs are enqueued node 2 is SIGKILLed; at two thirds
// it is started again and rejoins (IST on Galera, distributed recovery on Group Replication) while
// the load runs on. A ledger kept in this process (and written to a JSONL file) records every
// confirmed enqueue, every claim and every confirmed completion; the run reconciles it against the
// jobs left in the database: 0 lost, 0 duplicated, 0 completed twice.
// Scale: TASKROW_FAILOVER_JOBS (default 3,000); clusters: TASKROW_FAILOVER_CLUSTERS (default galera,group-replication).
const JOBS = Number(process.env['TASKROW_FAILOVER_JOBS'] ?? 3000);
const KINDS = (process.env['TASKROW_FAILOVER_CLUSTERS'] ?? 'galera,group-replication').split(',').map((s) => s.trim()) as ClusterKind[];
const VICTIM = 1;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** What the clients saw, kept outside the database. */
class Ledger {
  readonly enqueued = new Map<number, number>(); // payload -> job id, confirmed commits only
  readonly uncertain = new Set<number>(); // payloads of batches whose enqueue failed (committed or not)
  readonly claims: { id: number; payload: number; attempt: number; token: number; consumer: number; whileDown: boolean }[] = [];
  readonly completed = new Map<number, number>(); // payload -> confirmed completions
  readonly errors = new Map<string, number>();
  constructor(readonly file: string) {
    writeFileSync(file, '');
  }
  log(entry: Record<string, unknown>): void {
    appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
  }
  error(who: string, err: unknown): void {
    const code = (err as { code?: string }).code ?? 'unknown';
    this.errors.set(`${who} ${code}`, (this.errors.get(`${who} ${code}`) ?? 0) + 1);
    this.log({ t: 'error', who, code, message: String((err as Error).message ?? err).slice(0, 200) });
  }
}

for (const kind of KINDS) {
  describe(`${kind} · failover`, () => {
    it(`2 producers and 10 consumers over 3 nodes, node ${VICTIM + 1} SIGKILLed mid-run and rejoined: 0 lost, 0 duplicated, 0 completed twice`, async () => {
      // Full durability: a node SIGKILLed with relaxed flushing loses commits its binary log or
      // gcache already shipped, and a Group Replication member then cannot rejoin (its recovery
      // stops on a missing row, error 1032).
      const cluster = await startCluster({ kind, durability: 'full' });
      const prefix = `fo${process.pid}_`;
      const name = 'failover';
      const ledger = new Ledger(join(tmpdir(), `taskrow-failover-${kind}-${process.pid}.jsonl`));
      const pools = Array.from({ length: 12 }, (_, i) => failoverPool(cluster.urls, i % cluster.urls.length));
      let phase: 'before' | 'down' | 'after' = 'before';
      let stopConsumers = false;
      try {
        const admin = await taskrow(pools[0]!.pool, { prefix });
        await admin.migrate();
        const queueOf = async (i: number) => (await taskrow(pools[i]!.pool, { prefix })).queue<number>(name, { keepFinishedFor: 3_600_000, maxAttempts: 1000 });
        const producers = await Promise.all([0, 1].map(queueOf));
        const consumers = await Promise.all(Array.from({ length: 10 }, (_, c) => queueOf(2 + c)));
        const produce = async (q: (typeof producers)[number], p: number): Promise<void> => {
          for (let start = p * 20; start < JOBS; start += 40) {
            const batch = Array.from({ length: Math.min(20, JOBS - start) }, (_, k) => start + k);
            try {
              const res = await q.enqueueMany(batch.map((payload) => ({ payload })));
              for (const [k, r] of res.entries()) ledger.enqueued.set(batch[k]!, r.id);
              ledger.log({ t: 'enqueued', ids: res.map((r) => r.id), payloads: batch });
            } catch (err) {
              for (const b of batch) ledger.uncertain.add(b);
              ledger.error(`producer`, err);
            }
            await sleep(10);
          }
        };
        const consume = async (q: (typeof consumers)[number], c: number): Promise<void> => {
          while (!stopConsumers) {
            let jobs: Job<number>[];
            try {
              jobs = await q.claim({ limit: 5, lease: 5000 });
            } catch (err) {
              ledger.error('claim', err);
              await sleep(20);
              continue;
            }
            if (jobs.length === 0) await sleep(20);
            for (const job of jobs) {
              ledger.claims.push({ id: job.id, payload: job.payload, attempt: job.attempt, token: job.token, consumer: c, whileDown: phase === 'down' });
              try {
                await q.complete(job);
                ledger.completed.set(job.payload, (ledger.completed.get(job.payload) ?? 0) + 1);
                ledger.log({ t: 'completed', id: job.id, payload: job.payload, token: job.token, consumer: c });
              } catch (err) {
                ledger.error('complete', err);
              }
            }
          }
        };
        const t0 = performance.now();
        const consuming = consumers.map(consume);
        const producing = Promise.all(producers.map(produce));
        const produced = (): number => ledger.enqueued.size + ledger.uncertain.size;
        await until('a third of the jobs enqueued', () => produced() >= JOBS / 3, 300);
        const victimPid = cluster.pids()[VICTIM];
        await cluster.killNode(VICTIM);
        phase = 'down';
        const killedAt = performance.now();
        ledger.log({ t: 'kill', node: VICTIM + 1, pid: victimPid });
        await until('two thirds of the jobs enqueued', () => produced() >= (2 * JOBS) / 3, 300);
        const down = (performance.now() - killedAt) / 1000;
        const restartAt = performance.now();
        await cluster.restartNode(VICTIM);
        const rejoin = (performance.now() - restartAt) / 1000;
        phase = 'after';
        ledger.log({ t: 'rejoined', node: VICTIM + 1, pid: cluster.pids()[VICTIM] });
        await producing;
        const rows = async () => {
          const out: { id: number; payload: number; state: string }[] = [];
          let after: string | undefined;
          do {
            const page = await admin.queue<number>(name).list({ state: ['ready', 'delayed', 'running', 'done', 'dead'], limit: 1000, after });
            out.push(...page.jobs.map((j) => ({ id: j.id, payload: j.payload, state: j.state })));
            after = page.next;
          } while (after);
          return out;
        };
        // Not "every confirmed job completed": a completion whose reply was lost is done without a confirmation.
        await until('every job in the database done', async () => (await rows()).every((r) => r.state === 'done'), 300);
        stopConsumers = true;
        await Promise.all(consuming);
        const seconds = (performance.now() - t0) / 1000;

        const db = await rows();
        const jobsOf = new Map<number, number[]>();
        for (const r of db) jobsOf.set(r.payload, [...(jobsOf.get(r.payload) ?? []), r.id]);
        const lost = [...ledger.enqueued.keys()].filter((p) => !db.some((r) => r.payload === p && r.state === 'done'));
        const duplicated = [...jobsOf.entries()].filter(([, ids]) => ids.length > 1).map(([p]) => p);
        const twice = [...ledger.completed.entries()].filter(([, n]) => n > 1).map(([p]) => p);
        const strangers = db.filter((r) => !ledger.enqueued.has(r.payload) && !ledger.uncertain.has(r.payload));
        const wrongId = [...ledger.enqueued.entries()].filter(([p, id]) => !(jobsOf.get(p) ?? []).includes(id));
        const unconfirmedDone = db.filter((r) => r.state === 'done' && !ledger.completed.has(r.payload)).length;
        const uncertainCommitted = [...ledger.uncertain].filter((p) => jobsOf.has(p)).length;
        const movedConsumers = new Set(ledger.claims.filter((c) => c.whileDown && (2 + c.consumer) % cluster.urls.length === VICTIM).map((c) => c.consumer));
        process.stdout.write(
          `\n## Failover (${kind}, ${cluster.versionString}): ${JOBS} jobs, 2 producers, 10 consumers over 3 nodes; node ${VICTIM + 1} SIGKILLed ` +
            `after ${((killedAt - t0) / 1000).toFixed(1)} s, down ${down.toFixed(1)} s, rejoined in ${rejoin.toFixed(1)} s; run ${seconds.toFixed(1)} s.\n` +
            `   ledger: ${ledger.enqueued.size} enqueues confirmed, ${ledger.uncertain.size} unconfirmed (${uncertainCommitted} of them committed), ` +
            `${ledger.claims.length} claims (${ledger.claims.filter((c) => c.attempt > 1).length} re-claims after a lease ran out), ` +
            `${[...ledger.completed.values()].reduce((s, n) => s + n, 0)} completions confirmed, ${unconfirmedDone} done without a confirmation (reply lost);\n` +
            `   client errors: ${[...ledger.errors].map(([k, n]) => `${k} ×${n}`).join(', ') || 'none'};\n` +
            `   reconciliation: lost ${lost.length}, duplicated ${duplicated.length}, completed twice ${twice.length}, unknown jobs ${strangers.length}, ` +
            `id mismatches ${wrongId.length}; consumers of node ${VICTIM + 1} that claimed elsewhere while it was down: ${movedConsumers.size} of 3. Ledger: ${ledger.file}\n`,
        );
        expect(cluster.pids()[VICTIM]).not.toBe(victimPid);
        expect(movedConsumers.size).toBe(3);
        expect(lost).toEqual([]);
        expect(duplicated).toEqual([]);
        expect(twice).toEqual([]);
        expect(strangers).toEqual([]);
        expect(wrongId).toEqual([]);
        expect(db.length).toBe(ledger.enqueued.size + uncertainCommitted);
      } finally {
        stopConsumers = true;
        await Promise.allSettled(pools.map((p) => p.end()));
        await cluster.stop();
      }
    });
  });
}
