import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';
import type { Taskrow } from '@taskrow/core';
import { median } from './lib.js';
import { loopCycles } from './loop-cycle.js';

// Dones and Loop on a cluster beside one server: the same work, connection i on node i mod the
// number of URLs (one URL: a single server). Scale: TASKROW_BENCH_CLUSTER_KEYS (default 150,000),
// TASKROW_BENCH_CLUSTER_LOOP_IDS (default 20,000), TASKROW_BENCH_LOOP_SECONDS (default 4).
const KEYS = Number(process.env['TASKROW_BENCH_CLUSTER_KEYS'] ?? 150_000);
const LOOP_IDS = Number(process.env['TASKROW_BENCH_CLUSTER_LOOP_IDS'] ?? 20_000);
const SECONDS = Number(process.env['TASKROW_BENCH_LOOP_SECONDS'] ?? 4);
/** Clients of the Dones figures: one per node of a 3-node cluster. */
const CLIENTS = 3;
/** Connections marking shared keys at once, so marks of one key race across nodes. */
const OVERLAPPING = 30;
/** Loop workers, each on its own connection. */
const LOOP_WORKERS = 12;

/** One figure per scenario, in units per second. */
export interface PrimitiveRates {
  readonly mark: number;
  readonly overlapping: number;
  readonly pending: number;
  readonly loop: number;
}

const keyOf = (i: number): string => `job-${String(i).padStart(8, '0')}/chunk.out`;

async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** `n` taskrow clients, client i on its own connection to `urls[i % urls.length]`; `use` gets them, then they close. */
async function withClients<T>(urls: readonly string[], prefix: string, n: number, use: (trs: Taskrow[]) => Promise<T>): Promise<T> {
  const conns = await Promise.all(Array.from({ length: n }, (_, i) => mysql.createConnection(urls[i % urls.length]!)));
  try {
    return await use(await Promise.all(conns.map((c) => taskrow(c, { prefix }))));
  } finally {
    await Promise.allSettled(conns.map((c) => c.end()));
  }
}

/** Splits `xs` into `n` interleaved parts. */
const parts = <T>(xs: readonly T[], n: number): T[][] => Array.from({ length: n }, (_, p) => xs.filter((_, i) => i % n === p));

/**
 * Dones mark and pending, and Loop get(100) -> did, `runs` times each on `urls` (tables of
 * `prefix`, migrated); medians. Every mark, pending and get of a run is spread over the URLs.
 */
export async function primitiveRates(urls: readonly string[], prefix: string, runs: number): Promise<PrimitiveRates> {
  const keys = Array.from({ length: KEYS }, (_, i) => keyOf(i));
  const mark: number[] = [];
  const overlapping: number[] = [];
  const pending: number[] = [];
  const loop: number[] = [];
  await withClients(urls, prefix, CLIENTS, async (trs) => {
    for (let run = 0; run < runs; run++) {
      const mine = parts(keys, CLIENTS);
      mark.push(KEYS / (await seconds(() => Promise.all(trs.map((tr, c) => tr.dones(`cm${run}`).mark(mine[c]!))))));
      const even = parts(keys, 2)[0]!;
      await trs[0]!.dones(`ch${run}`).mark(even);
      let found = 0;
      const candidates = parts(keys, CLIENTS);
      pending.push(
        KEYS /
          (await seconds(() =>
            Promise.all(
              trs.map(async (tr, c) => {
                for await (const _ of tr.dones(`ch${run}`).pending(candidates[c]!)) found += 1;
              }),
            ),
          )),
      );
      if (found !== KEYS - even.length) throw new Error(`pending found ${found} not-done keys, expected ${KEYS - even.length}`);
    }
  });
  const shared = Math.floor(KEYS / 5);
  const per = Math.floor((2 * shared) / OVERLAPPING);
  const batches = Array.from({ length: OVERLAPPING }, (_, c) => Array.from({ length: per }, (_, j) => keyOf((c * (per >> 1) + j) % shared)));
  await withClients(urls, prefix, OVERLAPPING, async (trs) => {
    for (let run = 0; run < runs; run++) {
      overlapping.push((OVERLAPPING * per) / (await seconds(() => Promise.all(trs.map((tr, c) => tr.dones(`co${run}`).mark(batches[c]!))))));
      const marked = await trs[0]!.dones(`co${run}`).count();
      if (marked !== shared) throw new Error(`${OVERLAPPING} clients marked ${marked} distinct keys, expected ${shared}`);
    }
  });
  await withClients(urls, prefix, LOOP_WORKERS, async (trs) => {
    const setup = await trs[0]!.createLoop('cbench', { idType: 'int' });
    await setup.add(Array.from({ length: LOOP_IDS }, (_, i) => i + 1));
    const loops = trs.map((tr) => tr.loop('cbench', { idType: 'int' }));
    for (let run = 0; run < runs; run++) {
      loop.push(
        await loopCycles(
          LOOP_WORKERS,
          SECONDS,
          (w) => loops[w]!.get(100, { minLoopTime: 0 }),
          async (w, ids) => void (await loops[w]!.did(ids)),
        ),
      );
    }
  });
  return { mark: median(mark), overlapping: median(overlapping), pending: median(pending), loop: median(loop) };
}
