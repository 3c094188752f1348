import { performance } from 'node:perf_hooks';
import { boundedSelect, STATEMENT_TIME_LIMIT_ERRNO, type Dialect } from '../dialect.js';
import type { SqlClient, SqlConnection } from '../port.js';
import { loopRegistryTable, type LoopTable } from './tables.js';

/** How long a `get` waits for its loop's gate before it takes ids without it. */
export const GATE_WAIT_MS = 1000;

/** How long a loop handle whose `get` found the gate stalled takes ids without waiting for it. */
export const GATE_REST_MS = 10_000;

/**
 * The gate of a loop's getters: a locking read of the loop's registry row, which nothing else
 * locks, bounded to `GATE_WAIT_MS` on the server. Params: the loop's name.
 */
export function gateSql(dialect: Pick<Dialect, 'engine'>, prefix: string): string {
  return boundedSelect(dialect, `SELECT 1 FROM ${loopRegistryTable(prefix)} WHERE \`name\` = ? FOR UPDATE`, GATE_WAIT_MS);
}

/**
 * Passes the gate of loop `t` in `conn`'s transaction: waits, on the server, until no other
 * `get` of the loop holds it, for at most `GATE_WAIT_MS`; the gate is then held until the
 * transaction ends. Getters that pass one at a time (`turns: true`) do not skip-scan each
 * other's locked rows (with 64 getters on a 2-core server, SKIP LOCKED reads that each walk the
 * rows all the others hold cost more than waiting in turn). The gate decides nothing about which
 * ids are taken: the locking read after it still skips held rows, so a getter that did not pass
 * (its wait ran out: a holder that stalled) takes ids exactly as it would have without a gate. On
 * a multi-writer cluster row locks are per node: getters take turns per node. Resolves true when
 * the gate was passed, false when the wait ran out; any other error is the caller's.
 */
async function passGate(conn: SqlConnection, client: SqlClient, sql: string, t: LoopTable): Promise<boolean> {
  try {
    await conn.query(sql, [t.loop]);
    return true;
  } catch (err) {
    if (STATEMENT_TIME_LIMIT_ERRNO.has(client.describeError(err).errno ?? 0)) return false;
    throw err;
  }
}

/**
 * A loop handle's way through the gate (`passGate`). After a wait that ran out, the handle's
 * getters take ids without the gate for `GATE_REST_MS`, then try it again: a holder that stays
 * stalled (until the server ends its session) costs each handle one wait per rest, not one per `get`.
 */
export class LoopGate {
  private restUntil = 0;

  constructor(
    private readonly client: SqlClient,
    private readonly sql: string,
    private readonly t: LoopTable,
  ) {}

  /** Passes the gate in `conn`'s transaction, or not (see `passGate`); never throws for a wait that ran out. */
  async pass(conn: SqlConnection): Promise<void> {
    if (performance.now() < this.restUntil) return;
    if (!(await passGate(conn, this.client, this.sql, this.t))) this.restUntil = performance.now() + GATE_REST_MS;
  }
}
