import { toNumber } from '../validate.js';
import { result, varNumber, type DoctorContext } from './context.js';
import type { DoctorCheck } from './types.js';

/** The share of `max_connections` in use past which the check warns. */
const BUSY_SHARE = 0.8;

/**
 * The `connections` check: connections in use (`Threads_connected`) and the most ever used
 * (`Max_used_connections`) against `max_connections`; `warn` past 80 %. Read-only.
 */
export async function connectionsCheck(ctx: DoctorContext): Promise<DoctorCheck> {
  const max = varNumber(ctx, 'max_connections');
  const { rows } = await ctx.exec.query<Record<string, unknown>>("SHOW GLOBAL STATUS WHERE Variable_name IN ('Threads_connected', 'Max_used_connections')");
  const status = new Map(rows.map((r) => [String(Object.values(r)[0]).toLowerCase(), toNumber(Object.values(r)[1])]));
  const now = status.get('threads_connected');
  const peak = status.get('max_used_connections');
  const details = { maxConnections: max ?? null, threadsConnected: now ?? null, maxUsedConnections: peak ?? null };
  const summary = `${now ?? '?'} connected, at most ${peak ?? '?'} since start, of max_connections=${max ?? '?'}`;
  if (max === undefined || peak === undefined || peak < max * BUSY_SHARE) return result('connections', 'ok', summary, undefined, details);
  const fix = "raise max_connections, or shrink the pools: count each process's pool, plus one connection per queue for doorbell workers";
  return result('connections', 'warn', `${summary}: near the limit, where new connections are refused`, fix, details);
}

/**
 * The `performance-schema` check. taskrow reads `performance_schema` only on MySQL, at connect,
 * to tell a Group Replication member in multi-primary mode (`Dialect.multiWriter`); with it off
 * there, such a member is taken for a single server. `ok` on MariaDB either way.
 */
export function performanceSchemaCheck(ctx: DoctorContext): DoctorCheck {
  const on = /^(on|1)$/i.test(ctx.vars.get('performance_schema') ?? '');
  const details = { performanceSchema: on };
  if (ctx.exec.dialect.engine === 'mariadb') {
    return result('performance-schema', 'ok', `${on ? 'on' : 'off'}; taskrow does not read it on MariaDB`, undefined, details);
  }
  if (on) return result('performance-schema', 'ok', 'on; taskrow reads it at connect to tell a Group Replication multi-primary member', undefined, details);
  const fix = 'on Group Replication, start the server with performance_schema=ON';
  return result(
    'performance-schema',
    'warn',
    'off: on a Group Replication multi-primary member taskrow cannot tell, and retries certification failures less',
    fix,
    details,
  );
}
