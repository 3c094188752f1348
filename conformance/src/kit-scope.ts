import type { ConformanceOptions } from '@taskrow/core/conformance';

/**
 * How much of the kit an adapter other than mysql2 and mariadb runs: the cases that reach the
 * adapter (`scope: 'adapter'`, packages/core/src/conformance/adapter.ts), or every case with
 * `TASKROW_KIT=full` (while working on an adapter, before a release). mysql2 and mariadb always run
 * the whole kit, on every server and cluster.
 */
export function libraryKitScope(env: NodeJS.ProcessEnv = process.env): ConformanceOptions {
  const kit = env['TASKROW_KIT'] ?? 'adapter';
  if (kit !== 'adapter' && kit !== 'full') throw new Error(`TASKROW_KIT: expected "adapter" or "full", got ${JSON.stringify(kit)}`);
  return { scope: kit };
}
