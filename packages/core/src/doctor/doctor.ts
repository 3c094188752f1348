import type { Executor } from '../engine/executor.js';
import { TaskrowError } from '../errors.js';
import { CHECK_TIMEOUT_MS, result, type DoctorContext } from './context.js';
import { clockCheck } from './clock.js';
import { connectionsCheck, performanceSchemaCheck } from './connections.js';
import { directConnectionCheck } from './direct.js';
import { privilegesCheck } from './privileges.js';
import { proceduresCheck } from './procedures.js';
import { purgeLagCheck, tableSizesCheck } from './purge.js';
import { schemaCheck } from './schema.js';
import { readVariables, serverCheck } from './server.js';
import { binlogCheck, isolationCheck, timeoutsCheck } from './settings.js';
import type { DoctorCheck, DoctorReport } from './types.js';

/** Every check, in the order the report lists them. */
const CHECKS: readonly { readonly id: string; readonly run: (ctx: DoctorContext) => DoctorCheck | Promise<DoctorCheck> }[] = [
  { id: 'server', run: serverCheck },
  { id: 'schema', run: schemaCheck },
  { id: 'privileges', run: privilegesCheck },
  { id: 'procedures', run: proceduresCheck },
  { id: 'binlog', run: binlogCheck },
  { id: 'isolation', run: isolationCheck },
  { id: 'timeouts', run: timeoutsCheck },
  { id: 'connections', run: connectionsCheck },
  { id: 'performance-schema', run: performanceSchemaCheck },
  { id: 'clock', run: clockCheck },
  { id: 'direct-connection', run: directConnectionCheck },
  { id: 'purge-lag', run: purgeLagCheck },
  { id: 'table-sizes', run: tableSizesCheck },
];

/** Codes that say the connection itself is gone (or timed out), not that one check failed. */
const CONNECTION_CODES = new Set(['CONNECTION_LOST', 'CLIENT_CLOSED']);

/**
 * Checks the server and the schema under `prefix` for what taskrow needs, and resolves to one
 * result per check (see `DoctorCheck`). Read-only: it sends only reads, `SHOW` statements, one
 * `SELECT SLEEP` and one `KILL QUERY` of its own sleeping connection (see `directConnectionCheck`);
 * it MUST NOT write, create or drop anything. Each statement is bounded by 5 s and tried once. A
 * check that fails is reported (`warn`, with its error), never thrown; it rejects only when the
 * connection is dead (`CONNECTION_LOST`, `CLIENT_CLOSED`: a check found it so, and `SELECT 1`
 * then failed too).
 */
export async function doctor(exec: Executor, prefix: string): Promise<DoctorReport> {
  const bounded = exec.within(CHECK_TIMEOUT_MS).once();
  // Variables that cannot be read leave the checks that read them to say 'unknown'; a dead connection still rejects.
  const vars = await readVariables({ exec: bounded }).catch((err: unknown) => {
    if (err instanceof TaskrowError && CONNECTION_CODES.has(err.code)) throw err;
    return new Map<string, string>();
  });
  const ctx: DoctorContext = { exec: bounded, prefix, vars, statementTimeoutMs: exec.timeoutMs };
  const checks: DoctorCheck[] = [];
  for (const c of CHECKS) checks.push(await guarded(ctx, c.id, c.run));
  return { checks };
}

/** Runs one check; an error becomes a `warn` naming it, unless the connection is dead (then it is thrown). */
async function guarded(ctx: DoctorContext, id: string, run: (ctx: DoctorContext) => DoctorCheck | Promise<DoctorCheck>): Promise<DoctorCheck> {
  try {
    return await run(ctx);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    if (err instanceof TaskrowError && CONNECTION_CODES.has(err.code)) {
      await ctx.exec.query('SELECT 1'); // rejects when the connection is dead: the report cannot go on
      return result(
        id,
        'warn',
        `no answer within ${CHECK_TIMEOUT_MS / 1000} s: ${error}`,
        'run the doctor again; a server this slow to answer slows taskrow too',
        { error },
      );
    }
    return result(id, 'warn', `could not check: ${error}`, undefined, { error, ...(err instanceof TaskrowError ? { code: err.code, errno: err.errno } : {}) });
  }
}
