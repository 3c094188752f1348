import { slot, type InstanceState } from '../instance.js';
import { boundedSelect, STATEMENT_TIME_LIMIT_ERRNO, type Dialect } from '../dialect.js';
import type { SqlClient, SqlConnection } from '../port.js';
import { loopRegistryTable, type LoopTable } from './tables.js';
import { AdaptiveLimit, ONE_TURN, type TurnLimit } from './adaptive.js';

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

/**
 * Ends a turn taken from `ProcessTurns` (a no-op for a getter that went on without one); call
 * once. `measured` false: the turn's time says nothing of the server's pace (its `get()` failed
 * or took no ids), and the limit is not told of it.
 */
export type EndTurn = (measured?: boolean) => void;

const noTurn: EndTurn = () => undefined;

/**
 * The turns of one process. Getters of one loop on one server that take turns (through any
 * client and handle of the process) take them here first: `limit` says how many may hold one at
 * once (one for `turns: true`, which then also takes the server's, `LoopGate`, so at most one of
 * them waits on the server at a time; a number that follows the latencies for `turns: 'auto'`, see
 * `AdaptiveLimit`). The others wait in the process, holding no connection and sending no
 * statement. A getter goes on without a turn once no turn has ended for `GATE_WAIT_MS`, and
 * getters of the process then skip the turns for `GATE_REST_MS`: a getter that stalls (a statement
 * on a silent socket, until its bound) holds the others up that long, once. Which ids a `get()`
 * takes is unchanged (see `passGate`).
 */
export class ProcessTurns {
  private held = 0;
  private restUntil = 0;
  /** When a turn last ended (`performance.now()`). */
  private lastEnd = -Infinity;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: TurnLimit = ONE_TURN) {}

  /**
   * Resolves when this getter's turn comes, or without one once no turn has ended for
   * `GATE_WAIT_MS` (and at least that long after it asked): a getter behind turns that keep
   * ending waits on, one behind a turn that stalls goes on. Resolves to the end of its turn.
   */
  async take(): Promise<EndTurn> {
    if (performance.now() < this.restUntil) return noTurn;
    if (this.held < this.limit.now()) {
      this.held++;
      return this.ender();
    }
    const came = await new Promise<boolean>((resolve) => {
      let timer: ReturnType<typeof setTimeout>;
      const next = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const check = (): void => {
        const quiet = performance.now() - this.lastEnd;
        if (quiet < GATE_WAIT_MS) {
          timer = setTimeout(check, GATE_WAIT_MS - quiet);
          return;
        }
        const at = this.waiting.indexOf(next);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(false);
      };
      timer = setTimeout(check, GATE_WAIT_MS);
      this.waiting.push(next);
    });
    if (came) return this.ender();
    this.restUntil = performance.now() + GATE_REST_MS;
    return noTurn;
  }

  /**
   * The end of a turn just given: tells the limit how long it was held (unless not `measured`),
   * then hands turns to waiters while the limit allows, or frees it. Ends it once, however often called.
   */
  private ender(): EndTurn {
    let ended = false;
    const from = performance.now();
    const full = this.held >= this.limit.now();
    return (measured = true) => {
      if (ended) return;
      ended = true;
      this.lastEnd = performance.now();
      if (measured) this.limit.ended(this.lastEnd - from, full);
      this.held--;
      while (this.waiting.length > 0 && this.held < this.limit.now()) {
        this.held++;
        this.waiting.shift()!();
      }
    };
  }
}

const PROCESS_TURNS = slot('loop turns', () => new Map<string, ProcessTurns>());

/**
 * The turns of the taskrow instance `state` at loop `t` on the server `dialect` was read from (its
 * host, port and database): one at a time, or with `adaptive` as many as an `AdaptiveLimit` allows
 * (each kind its own). A dialect that names no server (one built by hand) gets turns of its own.
 */
export function processTurnsOf(state: InstanceState, dialect: Pick<Dialect, 'server'>, prefix: string, t: LoopTable, adaptive = false): ProcessTurns {
  const processTurns = state.get(PROCESS_TURNS);
  const make = (): ProcessTurns => new ProcessTurns(adaptive ? new AdaptiveLimit() : ONE_TURN);
  if (dialect.server === undefined) return make();
  const key = `${dialect.server}\u0000${prefix}\u0000${t.loop}${adaptive ? '\u0000auto' : ''}`;
  let turns = processTurns.get(key);
  if (!turns) processTurns.set(key, (turns = make()));
  return turns;
}
