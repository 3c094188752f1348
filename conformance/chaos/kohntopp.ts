import { expect } from 'vitest';
import type { Job, Taskrow } from '@taskrow/core';
import { Ledger, type Reconciled } from './ledger.js';
import type { Scene } from './lib.js';

// Köhntopp's scenario under a fault: PRODUCERS producers enqueue (one through enqueueMany in
// batches of 10, as his producers commit every 10; the other through single enqueue calls),
// CONSUMERS consumers claim batches and complete them, while `fault` runs. Every outcome goes to
// the ledger; nothing is retried by the test (a rejected call is an error surfaced to the caller).

/** How a run is shaped. */
export interface KohntoppRun {
  readonly scene: Scene;
  /** The taskrow under test (its pool is what the fault hits). */
  readonly tr: Taskrow;
  readonly jobs: number;
  readonly producers?: number;
  readonly consumers?: number;
  /** Lease of each claim, milliseconds. */
  readonly lease: number;
  /** Runs beside producers and consumers until `running()` turns false. */
  fault(running: () => boolean, ledger: Ledger): Promise<void>;
  /** Longest run, ms; the run ends then even if not drained (what is left counts as stranded). */
  readonly limitMs: number;
}

/** What a run found. */
export interface KohntoppResult extends Reconciled {
  readonly seconds: number;
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const seqOf = (job: Job): number => (job.payload as { seq: number }).seq;

async function produce(run: KohntoppRun, ledger: Ledger, which: number, count: number, from: number, running: () => boolean): Promise<void> {
  const q = run.tr.queue<{ seq: number }>('k');
  for (let at = from; at < from + count && running(); ) {
    const seqs = Array.from({ length: Math.min(10, from + count - at) }, (_, i) => at + i);
    at += seqs.length;
    if (which % 2 === 0) {
      await q.enqueueMany(seqs.map((seq) => ({ payload: { seq } }))).then(
        (res) =>
          ledger.enqueue(
            seqs,
            res.map((r) => r.id),
          ),
        (err) => (ledger.enqueue(seqs, null), ledger.error(err)),
      );
    } else {
      for (const seq of seqs) {
        await q.enqueue({ seq }).then(
          (r) => ledger.enqueue([seq], [r.id]),
          (err) => (ledger.enqueue([seq], null), ledger.error(err)),
        );
      }
    }
  }
}

async function consume(run: KohntoppRun, ledger: Ledger, running: () => boolean): Promise<void> {
  const q = run.tr.queue<{ seq: number }>('k');
  while (running()) {
    let jobs: Job<{ seq: number }>[];
    try {
      jobs = await q.claim({ limit: 10, lease: run.lease });
    } catch (err) {
      ledger.error(err);
      await pause(50);
      continue;
    }
    for (const j of jobs) ledger.sawId(seqOf(j), j.id);
    if (jobs.length === 0) {
      await pause(20);
      continue;
    }
    try {
      await q.complete(jobs);
      for (const j of jobs) ledger.completed(seqOf(j));
    } catch (err) {
      ledger.error(err);
      const applied = new Set((err as { applied?: readonly number[] }).applied ?? []);
      for (const j of jobs) applied.has(j.id) ? ledger.completed(seqOf(j)) : ledger.ackUncertain(seqOf(j));
    }
  }
}

/** Runs the scenario until every job is produced and the queue is drained, or `limitMs` passes. */
export async function runKohntopp(run: KohntoppRun): Promise<KohntoppResult> {
  const ledger = new Ledger();
  const producers = run.producers ?? 2;
  const consumers = run.consumers ?? 10;
  const t0 = performance.now();
  let producing = true;
  let over = false;
  const running = (): boolean => !over;
  const per = Math.ceil(run.jobs / producers);
  const made = Promise.all(Array.from({ length: producers }, (_, p) => produce(run, ledger, p, Math.min(per, run.jobs - p * per), p * per, running))).then(
    () => {
      producing = false;
    },
  );
  const consumed = Promise.all(Array.from({ length: consumers }, () => consume(run, ledger, running)));
  const fault = run.fault(running, ledger);
  const table = run.scene.table('queue_jobs');
  while (!over) {
    await pause(250);
    const left = producing
      ? 1
      : Number((await run.scene.probe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE queue = 'k'`).catch(() => [{ n: 1 }]))[0]?.n);
    over = left === 0 || performance.now() - t0 > run.limitMs;
  }
  await Promise.all([made, consumed, fault]);
  const left = await run.scene.probe<{ id: number; payload: string }>(`SELECT id, payload FROM ${table} WHERE queue = 'k'`);
  const reconciled = ledger.reconcile(left.map((r) => ({ id: Number(r.id), seq: (JSON.parse(r.payload) as { seq: number }).seq })));
  return { ...reconciled, seconds: (performance.now() - t0) / 1000 };
}

/** The ledger's verdict on a run of `jobs` jobs: nothing lost, duplicated, completed twice, left, or surfaced as an error. */
export function expectReconciled(result: KohntoppResult, jobs: number): void {
  expect(result.jobs).toBe(jobs);
  expect(result.lost, 'lost').toBe(0);
  expect(result.duplicated, 'duplicated').toBe(0);
  expect(result.doubleCompletions, 'completed twice').toBe(0);
  expect(result.stranded, 'left in the queue').toBe(0);
  expect(result.errors, `errors surfaced: ${result.errorSamples.join(' | ')}`).toBe(0);
}
