import { slot } from '../../instance.js';
import type { Executor } from '../../engine/executor.js';
import { TaskrowError } from '../../errors.js';
import type { SqlValue } from '../../port.js';

/**
 * Calling the Queue's stored procedures (see `index.ts`): `migrate()` installs them where the server
 * allows, so a server may lack one; a process that found one missing goes the
 * statement-by-statement way for `MISSING_RECHECK_MS`, then tries the CALL again (a procedure
 * created, or `EXECUTE` granted, meanwhile is used without a restart).
 */

/** Milliseconds a procedure found missing is not called (one failed CALL, writing nothing, per interval at most). */
export const MISSING_RECHECK_MS = 60_000;

/**
 * MySQL's and MariaDB's "PROCEDURE ... does not exist", and "execute command denied" (which a user
 * without `EXECUTE` gets whether or not the procedure exists).
 */
const NOT_CALLABLE = new Set([1305, 1370]);

/** The procedures found missing on the instance's server, with when (`performance.now()`). */
const MISSING = slot('procedures found missing', () => new Map<string, number>());

/**
 * Whether `exec` may CALL `procedure`: not inside an application transaction (a CALL commits),
 * through a client that ends an interrupted statement's transaction (`SqlClient.endsInterrupted`:
 * MySQL runs no handler for `KILL QUERY`, which leaves a procedure's transaction open), and not
 * found missing on this server within `MISSING_RECHECK_MS`.
 */
export function mayCall(exec: Executor, procedure: string): boolean {
  if (exec.client.joined || exec.client.endsInterrupted !== true) return false;
  const at = exec.state.get(MISSING).get(procedure);
  return at === undefined || performance.now() - at >= MISSING_RECHECK_MS;
}

/**
 * `CALL procedure(params)` through `exec` (retried as a whole, as any statement): the first row of
 * its first result set, however the adapter's client nests it (`[[rows], ok]` or `[rows]`).
 * Resolves to undefined, having run nothing, when the server has no such procedure or the user
 * may not execute it; `mayCall` is false for `MISSING_RECHECK_MS` from then on.
 */
export async function callProcedure<Row>(exec: Executor, procedure: string, params: readonly SqlValue[]): Promise<Row | undefined> {
  const rows = await callRows<Row>(exec, procedure, params);
  if (rows === undefined) return undefined;
  const row = rows[0];
  if (row === undefined) throw new TaskrowError('DATABASE_ERROR', `${procedure} returned no row`);
  return row;
}

/**
 * `CALL procedure(params)` through `exec`: the rows of its first result set, however the adapter's
 * client nests them (`[[rows], ok]` or `[rows]`). Undefined, having run nothing, when the procedure
 * cannot be called (see `callProcedure`).
 */
export async function callRows<Row>(exec: Executor, procedure: string, params: readonly SqlValue[]): Promise<Row[] | undefined> {
  return (await callResults(exec, procedure, params))?.[0] as Row[] | undefined;
}

/**
 * `CALL procedure(params)` through `exec`: its result sets in order, however the adapter's client
 * nests them (`[[rows], [rows], ok]`, or `[rows]` from one that passes only the first on).
 * Undefined, having run nothing, when the procedure cannot be called (see `callProcedure`).
 */
export async function callResults(exec: Executor, procedure: string, params: readonly SqlValue[]): Promise<unknown[][] | undefined> {
  try {
    const res = await exec.query<unknown>(`CALL ${procedure}(${params.map(() => '?').join(', ')})`, params);
    return Array.isArray(res.rows[0]) ? res.rows.filter((set): set is unknown[] => Array.isArray(set)) : [res.rows];
  } catch (err) {
    if (!(err instanceof TaskrowError) || err.errno === undefined || !NOT_CALLABLE.has(err.errno)) throw err;
    exec.state.get(MISSING).set(procedure, performance.now());
    return undefined;
  }
}
