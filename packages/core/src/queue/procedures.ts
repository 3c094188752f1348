import type { Dialect } from '../dialect.js';
import type { Executor } from '../engine/executor.js';
import { TaskrowError } from '../errors.js';
import type { SqlValue } from '../port.js';

/**
 * Calling the Queue's stored procedures (`enqueue-call.ts`, `ring-call.ts`): each is created by an
 * optional migration, so a server may lack one; a process that found one missing goes the
 * statement-by-statement way from then on.
 */

/**
 * MySQL's and MariaDB's "PROCEDURE ... does not exist", and "execute command denied" (which a user
 * without `EXECUTE` gets whether or not the procedure exists).
 */
const NOT_CALLABLE = new Set([1305, 1370]);

/** Servers (by dialect) and the procedures found missing there. */
const missing = new WeakMap<Dialect, Set<string>>();

/**
 * Whether `exec` may CALL `procedure`: not inside an application transaction (a CALL commits),
 * through a client that ends an interrupted statement's transaction (`SqlClient.endsInterrupted`:
 * MySQL runs no handler for `KILL QUERY`, which leaves a procedure's transaction open), and not
 * found missing on this server.
 */
export function mayCall(exec: Executor, procedure: string): boolean {
  return !exec.client.joined && exec.client.endsInterrupted === true && missing.get(exec.dialect)?.has(procedure) !== true;
}

/**
 * `CALL procedure(params)` through `exec` (retried as a whole, as any statement): the first row of
 * its first result set, however the adapter's client nests it (`[[rows], ok]` or `[rows]`).
 * Resolves to undefined, having run nothing, when the server has no such procedure or the user
 * may not execute it; `mayCall` is false from then on.
 */
export async function callProcedure<Row>(exec: Executor, procedure: string, params: readonly SqlValue[]): Promise<Row | undefined> {
  try {
    const res = await exec.query<unknown>(`CALL ${procedure}(${params.map(() => '?').join(', ')})`, params);
    const rows = Array.isArray(res.rows[0]) ? (res.rows[0] as unknown[]) : res.rows;
    const row = rows[0] as Row | undefined;
    if (row === undefined) throw new TaskrowError('DATABASE_ERROR', `${procedure} returned no row`);
    return row;
  } catch (err) {
    if (!(err instanceof TaskrowError) || err.errno === undefined || !NOT_CALLABLE.has(err.errno)) throw err;
    const set = missing.get(exec.dialect) ?? new Set<string>();
    missing.set(exec.dialect, set.add(procedure));
    return undefined;
  }
}
