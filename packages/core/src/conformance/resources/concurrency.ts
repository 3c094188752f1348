import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { ResourceUnavailableError } from '../../resources/errors.js';
import { freshName } from '../harness.js';
import type { SuiteContext } from '../session.js';
import { probeExisting, probeLocks, probeViolations } from './probe.js';

const JOBS = 32;
const ROUNDS = 4;

/** What the jobs hold right now, as they see it: entered after acquire resolves, left before release. */
class Ledger {
  readonly writers = new Map<string, number>();
  readonly readers = new Map<string, number>();
  readonly produced = new Set<string>();
  /** Per output: a counter each writer reads, yields, then writes back +1 (a lost update shows two writers). */
  readonly versions = new Map<string, number>();
  readonly violations: string[] = [];

  enter(job: string, inputs: readonly string[], outputs: readonly string[]): void {
    for (const k of outputs) {
      if ((this.writers.get(k) ?? 0) > 0) this.violations.push(`${job}: second writer on ${k}`);
      if ((this.readers.get(k) ?? 0) > 0) this.violations.push(`${job}: writer on ${k} while it is read`);
      this.writers.set(k, (this.writers.get(k) ?? 0) + 1);
    }
    for (const k of inputs) {
      if ((this.writers.get(k) ?? 0) > 0) this.violations.push(`${job}: reader on ${k} while it is written`);
      if (!this.produced.has(k)) this.violations.push(`${job}: reader of missing input ${k}`);
      this.readers.set(k, (this.readers.get(k) ?? 0) + 1);
    }
  }

  leave(inputs: readonly string[], outputs: readonly string[]): void {
    for (const k of outputs) this.writers.set(k, this.writers.get(k)! - 1);
    for (const k of inputs) this.readers.set(k, this.readers.get(k)! - 1);
  }
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** 32 jobs on separate connections compete for overlapping inputs and outputs; the invariants hold at every step. */
export function resourcesConcurrency<Tx>(ctx: () => SuiteContext<Tx>): void {
  it('the probe reports two writers, a writer with a reader, and a reader of a missing key, naming the holders', async () => {
    const { session, prefix } = ctx();
    const [held, missing] = [freshName('pv.'), freshName('pv.')];
    await session.taskrow.resources().produce(held);
    const [w1, w2, r1, r2] = Array.from({ length: 4 }, () => randomBytes(16).toString('hex'));
    const locks = `\`${prefix}resource_locks\``;
    const keys = `\`${prefix}resources\``;
    await session.probe.query(`INSERT INTO ${keys} (h, k) VALUES (UNHEX(LEFT(SHA2(?, 256), 32)), ?)`, [missing, Buffer.from(missing, 'utf8')]);
    const plant = (key: string, holder: string, mode: string) =>
      session.probe.query(
        `INSERT INTO ${locks} (h, holder, mode, lease_until) SELECT h, UNHEX(?), ?, UTC_TIMESTAMP(6) + INTERVAL 60 SECOND FROM ${keys} WHERE k = ?`,
        [holder, mode, Buffer.from(key, 'utf8')],
      );
    try {
      await plant(held, w1!, 'writer');
      await plant(held, w2!, 'writer');
      await plant(held, r1!, 'reader');
      await plant(missing, r2!, 'reader');
      const [wa, wb] = [w1!, w2!].sort();
      expect(await probeViolations(session.probe, prefix)).toEqual(
        [
          `${held}: writer ${wa} with writer ${wb}`,
          `${held}: writer ${w1} with reader ${r1}`,
          `${held}: writer ${w2} with reader ${r1}`,
          `${missing}: reader ${r2} while the key does not exist`,
        ].sort(),
      );
    } finally {
      await session.probe.query(`DELETE FROM ${locks} WHERE holder IN (UNHEX(?), UNHEX(?), UNHEX(?), UNHEX(?))`, [w1, w2, r1, r2]);
    }
    expect(await probeViolations(session.probe, prefix)).toEqual([]);
  });

  it(`${JOBS} jobs compete for overlapping keys: never two writers, never a reader with a writer, never a reader of a missing input`, async () => {
    const { session, prefix } = ctx();
    const base = freshName('cc');
    const seeds = Array.from({ length: 4 }, (_, i) => `${base}.seed.${i}`);
    const derived = Array.from({ length: 8 }, (_, i) => `${base}.derived.${i}`);
    const universe = [...seeds, ...derived];
    // Jobs 0..7 read two seeds; the others read a seed and a derived key another job produces.
    // Four jobs write each derived key, and every derived key is also some jobs' input.
    const plan = Array.from({ length: JOBS }, (_, i) => ({
      name: `${base}.job.${i}`,
      inputs: i < 8 ? [seeds[i % 4]!, seeds[(i + 1) % 4]!] : [seeds[i % 4]!, derived[(i + 3) % 8]!],
      outputs: [derived[i % 8]!],
    }));
    await session.taskrow.resources().produce(seeds);
    const ledger = new Ledger();
    for (const s of seeds) ledger.produced.add(s);
    const writes = new Map<string, number>();
    const { clients, close } = await session.openClients(JOBS);
    let running = true;
    let checks = 0;
    let busiest = 0;
    const probed: string[] = [];
    const monitor = (async () => {
      while (running) {
        probed.push(...(await probeViolations(session.probe, prefix)));
        busiest = Math.max(busiest, (await probeLocks(session.probe, prefix, universe)).filter((l) => l.live).length);
        checks += 1;
      }
    })();
    const outcomes = { ok: 0, failedRelease: 0, unavailable: 0, other: [] as string[] };
    try {
      await Promise.all(
        plan.map(async (p, i) => {
          const r = clients[i]!.resources({ releaseOnExit: false });
          const job = r.job(p.name, { inputs: p.inputs, outputs: p.outputs, lease: 60_000, wait: 45_000 });
          for (let round = 0; round < ROUNDS; round++) {
            try {
              await job.acquire();
            } catch (err) {
              if (err instanceof ResourceUnavailableError && err.reasons.every((x) => x.reason !== 'output_exists')) outcomes.unavailable += 1;
              else outcomes.other.push(`${p.name}: ${String(err)}`);
              continue;
            }
            ledger.enter(p.name, p.inputs, p.outputs);
            const seen = p.outputs.map((k) => ledger.versions.get(k) ?? 0);
            await pause(Math.random() * 4);
            for (const [j, k] of p.outputs.entries()) ledger.versions.set(k, seen[j]! + 1);
            const failed = round === 0 && i % 3 === 0;
            for (const k of p.outputs) writes.set(k, (writes.get(k) ?? 0) + 1);
            if (!failed) for (const k of p.outputs) ledger.produced.add(k);
            ledger.leave(p.inputs, p.outputs);
            await job.release({ failed });
            if (failed) outcomes.failedRelease += 1;
            else outcomes.ok += 1;
          }
        }),
      );
    } finally {
      running = false;
      await monitor;
      await close();
    }
    expect(outcomes.other).toEqual([]);
    expect(ledger.violations).toEqual([]);
    expect(probed).toEqual([]);
    expect(checks).toBeGreaterThan(10);
    expect(busiest).toBeGreaterThan(1);
    // Reconcile: every section ran once, no write was lost, nothing stays locked, and exactly the
    // outputs of successful releases exist.
    expect(outcomes.ok + outcomes.failedRelease + outcomes.unavailable).toBe(JOBS * ROUNDS);
    expect(outcomes.ok).toBeGreaterThan((JOBS * ROUNDS) / 2);
    for (const k of derived) expect(ledger.versions.get(k) ?? 0, k).toBe(writes.get(k) ?? 0);
    expect(await probeLocks(session.probe, prefix, universe)).toEqual([]);
    const holders = await session.probe.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM \`${prefix}resource_jobs\` WHERE job LIKE ?`, [`${base}.job.%`]);
    expect(Number(holders[0]?.n)).toBe(0);
    expect(await probeExisting(session.probe, prefix, universe)).toEqual([...ledger.produced].sort());
  });
}
