import { result, type DoctorContext } from './context.js';
import type { DoctorCheck } from './types.js';

/**
 * The `server` check: the engine and version read at connect time (taskrow refuses unsupported
 * servers there, so this is `ok`), and whether the server is a node of a multi-writer cluster.
 */
export function serverCheck(ctx: DoctorContext): DoctorCheck {
  const d = ctx.exec.dialect;
  const family = d.engine === 'mysql' ? 'MySQL' : 'MariaDB';
  const cluster = d.multiWriter ? '; a node of a multi-writer cluster (row locks per node; see docs/operations.md, Clusters)' : '';
  const details = { engine: d.engine, version: d.version, versionString: d.versionString, multiWriter: d.multiWriter };
  return result('server', 'ok', `${family} ${d.versionString}, supported${cluster}`, undefined, details);
}

/** Every variable the checks read, lower case (`SHOW VARIABLES` lists those the server has). */
export const VARIABLES = [
  'log_bin',
  'binlog_format',
  'transaction_isolation',
  'tx_isolation',
  'innodb_lock_wait_timeout',
  'wait_timeout',
  'max_connections',
  'performance_schema',
] as const;

/** `SHOW VARIABLES` for `VARIABLES`: the session's values (the global ones where none is set). Read-only. */
export async function readVariables(ctx: Pick<DoctorContext, 'exec'>): Promise<Map<string, string>> {
  const { rows } = await ctx.exec.query<Record<string, unknown>>(`SHOW VARIABLES WHERE Variable_name IN (${VARIABLES.map(() => '?').join(', ')})`, [
    ...VARIABLES,
  ]);
  return new Map(rows.map((r) => [String(Object.values(r)[0]).toLowerCase(), String(Object.values(r)[1] ?? '')]));
}
