import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The building blocks of the pickup measures (pickup.bench.ts, routines.bench.ts): a worker in
// another process (pickup-worker.mjs) that reports when each handler started, and a paced producer
// that times enqueue to handler start.

const script = fileURLToPath(new URL('./pickup-worker.mjs', import.meta.url));

/** Wall-clock time in ms, sub-millisecond, comparable across processes. */
export const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The `q` quantile of `xs`. */
export function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/** p50 and p99 of `xs` (ms). */
export function percentiles(xs: number[]): string {
  return `p50 ${quantile(xs, 0.5).toFixed(1)} ms, p99 ${quantile(xs, 0.99).toFixed(1)} ms`;
}

/** How a paced producer sends: `jobs` jobs, `perCall` per `add`, `rate` jobs per second. */
export interface Pace {
  readonly jobs: number;
  readonly rate: number;
  readonly perCall?: number;
}

/** What a paced run measured: each job's enqueue-to-start latency (ms) and each `add`'s own duration (ms). */
export interface Pickup {
  readonly latencies: number[];
  readonly callMs: number[];
}

/**
 * Waits until the workers are idle (their waits between polls have grown), then calls
 * `add(i)` for i = 0, perCall, 2 perCall, ... (jobs i to i + perCall - 1) at `pace.rate` jobs per
 * second, and waits up to 30 s until `starts` has every job.
 */
export async function measurePickup(add: (i: number) => Promise<unknown>, starts: Map<number, number>, pace: Pace): Promise<Pickup> {
  const perCall = pace.perCall ?? 1;
  const sent = new Map<number, number>();
  const callMs: number[] = [];
  await sleep(1500);
  const t0 = now();
  for (let i = 0; i < pace.jobs; i += perCall) {
    const due = t0 + (i * 1000) / pace.rate;
    if (due > now()) await sleep(due - now());
    const at = now();
    for (let k = i; k < Math.min(i + perCall, pace.jobs); k++) sent.set(k, at);
    await add(i);
    callMs.push(now() - at);
  }
  const end = now() + 30_000;
  while ([...sent.keys()].some((i) => !starts.has(i)) && now() < end) await sleep(20);
  return { latencies: [...sent].filter(([i]) => starts.has(i)).map(([i, at]) => starts.get(i)! - at), callMs };
}

/** A worker process; resolves once it is ready, with the map its handler starts land in (by payload `i`). */
export async function pickupChild(env: Record<string, string>): Promise<{ starts: Map<number, number>; stop(): Promise<void> }> {
  const starts = new Map<number, number>();
  const c = fork(script, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    c.on('message', (m: unknown) => (m === 'ready' ? resolve() : void starts.set((m as { i: number }).i, (m as { at: number }).at)));
    c.once('error', reject);
  });
  return { starts, stop: () => new Promise((r) => (c.once('exit', () => r()), c.send('stop'))) };
}
