import type { TestProject } from 'vitest/node';
import { startTargets, type ServerTarget } from '@taskrow/servers';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Every server this run tests against. */
    targets: ServerTarget[];
  }
}

/**
 * Starts every available server once per run and provides the list to every project. Under CI=true
 * a run without the three local servers fails here, before any test, instead of skipping.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const ci = process.env['CI'] === 'true' || process.env['CI'] === '1';
  // Benchmarks may ask for durable servers (innodb_flush_log_at_trx_commit=1, doublewrite on); tests run relaxed.
  const durability = process.env['TASKROW_BENCH_DURABILITY'] === 'full' ? 'full' : 'relaxed';
  // A benchmark's per-statement profile (TASKROW_BENCH_PROFILE=1) needs performance_schema, off by default on MariaDB.
  const performanceSchema = process.env['TASKROW_BENCH_PROFILE'] === '1';
  const set = await startTargets({ requireAll: ci, durability, performanceSchema });
  const lines = set.targets.map((t) => `  ${t.engine} ${t.version} (${t.versionString}, ${t.source})`);
  process.stderr.write(`taskrow: testing against ${set.targets.length} server(s):\n${lines.join('\n')}\n`);
  project.provide('targets', [...set.targets]);
  return () => set.stopAll();
}
