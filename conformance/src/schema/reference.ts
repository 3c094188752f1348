import { afterAll, beforeAll } from 'vitest';
import { dropPrefix, freshName } from '@taskrow/core/conformance';
import { taskrow as mysql2Taskrow } from '@taskrow/mysql2';
import mysql from 'mysql2/promise';
import { mysql2Probe } from '../harnesses/mysql2.js';

export type Probe = Awaited<ReturnType<typeof mysql2Probe>>;

/**
 * Registers hooks that open a probe and apply core's `migrate()` under a fresh reference prefix, and
 * drop every prefix in `prefixes` afterwards (push the prefix your test migrates under). The
 * returned function hands the probe, the reference prefix and that list to a test.
 */
export function useReference(url: string): () => { probe: Probe; reference: string; prefixes: string[] } {
  const reference = `${freshName('r')}_`;
  const prefixes = [reference];
  let probe: Probe | undefined;
  beforeAll(async () => {
    probe = await mysql2Probe(url);
    const pool = mysql.createPool({ uri: url, connectionLimit: 2 });
    try {
      await (await mysql2Taskrow(pool, { prefix: reference })).migrate();
    } finally {
      await pool.end();
    }
  });
  afterAll(async () => {
    if (!probe) return;
    for (const p of prefixes) await dropPrefix(probe, p);
    await probe.end();
  });
  return () => {
    if (!probe) throw new Error('the reference schema was not created (see the beforeAll error)');
    return { probe, reference, prefixes };
  };
}
