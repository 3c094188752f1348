import type { IncomingMessage, ServerResponse } from 'node:http';
import { Gauge, Registry } from 'prom-client';
import type { Taskrow } from '@taskrow/core';
import { intOption, strict, taskrowOption } from '../options.js';
import { sharedSnapshot, type Snapshot } from './snapshot.js';

/** Options of `registerTaskrowMetrics` and `metricsHandler`. */
export interface TaskrowMetricsOptions {
  readonly taskrow: Taskrow;
  /** The prom-client registry to register in; default a new one. */
  readonly registry?: Registry;
  /** Job and key counts stop at this many rows per state (1 to 10,000,000; default 1,000,000). */
  readonly countLimit?: number;
}

type Fill = (g: Gauge<string>, s: Snapshot) => void;

const GAUGES: readonly { name: string; help: string; labelNames: string[]; fill: Fill }[] = [
  {
    name: 'taskrow_queue_jobs',
    help: 'Jobs per queue and state (counted up to countLimit).',
    labelNames: ['queue', 'state'],
    fill: (g, s) => {
      for (const q of s.queues) for (const [state, c] of Object.entries(q.counts)) g.set({ queue: q.name, state }, c.value);
    },
  },
  {
    name: 'taskrow_queue_dead_jobs',
    help: 'Dead jobs per queue (counted up to countLimit).',
    labelNames: ['queue'],
    fill: (g, s) => {
      for (const q of s.queues) g.set({ queue: q.name }, q.counts.dead.value);
    },
  },
  {
    name: 'taskrow_queue_oldest_runnable_age_seconds',
    help: 'Seconds the oldest runnable job has waited since it became due (0: none runnable).',
    labelNames: ['queue'],
    fill: (g, s) => {
      for (const q of s.queues) g.set({ queue: q.name }, (q.oldestRunnableAge ?? 0) / 1000);
    },
  },
  {
    name: 'taskrow_loop_locked_ids',
    help: 'Ids of a loop locked now (leased by get()).',
    labelNames: ['loop'],
    fill: (g, s) => {
      for (const l of s.loops) g.set({ loop: l.name }, l.stats.locked);
    },
  },
  {
    name: 'taskrow_loop_bumped_ids',
    help: 'Ids of a loop bumped (lock_until now or past).',
    labelNames: ['loop'],
    fill: (g, s) => {
      for (const l of s.loops) g.set({ loop: l.name }, l.stats.bumped);
    },
  },
  {
    name: 'taskrow_dones_keys',
    help: 'Done keys per Dones namespace (counted up to countLimit).',
    labelNames: ['namespace'],
    fill: (g, s) => {
      for (const d of s.dones) g.set({ namespace: d.name }, d.count.value);
    },
  },
  {
    name: 'taskrow_resources_running_jobs',
    help: 'Resources jobs holding locks now.',
    labelNames: [],
    fill: (g, s) => g.set(s.runningResourceJobs),
  },
];

/**
 * Registers taskrow's gauges in a prom-client registry. Each scrape reads the database once
 * (shared by every gauge): queue depth by state, dead jobs, oldest runnable age, loop locked /
 * bumped ids, Dones keys and running Resources jobs. A scrape while the database cannot be read
 * rejects (the registry's `metrics()` fails) rather than reporting stale numbers. Returns the registry.
 */
export function registerTaskrowMetrics(options: TaskrowMetricsOptions): Registry {
  const o = strict('registerTaskrowMetrics()', options, ['taskrow', 'registry', 'countLimit']);
  const tr = taskrowOption('registerTaskrowMetrics()', o['taskrow']);
  const registry = (o['registry'] as Registry | undefined) ?? new Registry();
  const snapshot = sharedSnapshot(tr, intOption('registerTaskrowMetrics() countLimit', o['countLimit'], 1_000_000, 1, 10_000_000));
  for (const spec of GAUGES) {
    new Gauge({
      name: spec.name,
      help: spec.help,
      labelNames: spec.labelNames,
      registers: [registry],
      async collect() {
        const s = await snapshot();
        this.reset();
        spec.fill(this, s);
      },
    });
  }
  return registry;
}

/**
 * A `node:http` handler serving the Prometheus text format of `registry` (taskrow's gauges
 * registered in it, or in a new registry): 200 with the metrics, 503 with the reason when the
 * database cannot be read.
 */
export function metricsHandler(options: TaskrowMetricsOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const registry = registerTaskrowMetrics(options);
  return (_req, res) => {
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'Content-Type': registry.contentType }).end(body);
      },
      (err: unknown) => {
        res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`taskrow metrics unavailable: ${(err as Error).message}\n`);
      },
    );
  };
}
