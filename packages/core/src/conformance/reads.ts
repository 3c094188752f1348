import type { Probe } from './harness.js';

/** Runs `sql` on the probe's own session and counts the index and table reads it made (Handler_read_*). */
export async function handlerReads(probe: Probe, sql: string, params: readonly unknown[] = []): Promise<{ rows: Record<string, unknown>[]; reads: number }> {
  const count = async (): Promise<number> => {
    const rows = await probe.query<{ Value: unknown }>("SHOW SESSION STATUS LIKE 'Handler\\_read\\_%'");
    return rows.reduce((s, r) => s + Number(r.Value), 0);
  };
  const before = await count();
  const rows = await probe.query<Record<string, unknown>>(sql, params);
  return { rows, reads: (await count()) - before };
}
