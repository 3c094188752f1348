import { slot } from '../../instance.js';
import { performance } from 'node:perf_hooks';
import { placeholderList } from '../../chunk.js';
import type { Executor } from '../../engine/executor.js';
import type { SqlConnection } from '../../port.js';
import { toNumber } from '../../validate.js';
import { decodePayload } from '../model/payload.js';
import { CURSOR_MS, type ClaimCursor, type Position } from '../model/cursor.js';
import { NOW_PLUS, updateById, type QueueTables } from '../model/tables.js';
import { leaseConfirmed, leaseLeft } from '../model/held.js';
import { takeSlots, useSlots } from '../admission/rate.js';
import { promoteDue, PROMOTE_AT_LEAST } from './promote.js';
import { perQueue } from '../model/registry.js';
import { claimByCall } from './call.js';
import { mayCall } from '../routines/call.js';
import { TaskrowError } from '../../errors.js';
import type { Job, JobRef } from '../model/types.js';
import { leaseSet, pausedSql, ratedSql } from '../model/gate.js';
import { lockReadySql } from './ready.js';
import { heldSql } from '../model/fence.js';
import { claimColumns, newToken, WINDOW_SLACK_US, type ClaimRow, type Handed } from '../model/claimed.js';

/** How often (ms) a queue handle looks for due delayed jobs and expired leases while its claims find enough ready jobs. */
export const PROMOTE_EVERY_MS = 50;

/** Per queue handle: when it last looked for due jobs (`performance.now()`). */
export interface ClaimState {
  lastPromote: number;
  /** The last gate this handle read found the queue rate-limited: its claims take the rated path. */
  rated: boolean;
  /** Where the claims of the queue in this process read the ready rows from (shared by its handles). */
  readonly cursor: ClaimCursor;
  /** Whether due jobs wait, as its claims ask the handle's server (`dueWaiting`: one `?`, the queue). */
  readonly due: string;
  /** The handle's server's form of a locking read with plain reads in it (`lockingWithPlainReads`). */
  readonly gated: (select: string) => string;
  /** The gate is read by a statement of its own before the locking read (`Dialect.lockingReadsAlone`). */
  readonly gateApart: boolean;
}

/** What a gated read of the ready rows asks besides them (see `lockReady`). */
type GateSql = Pick<ClaimState, 'due' | 'gated'>;

const CLAIM_COLUMNS = claimColumns();

/**
 * The jobs an earlier run of this claim took before its connection was lost (its commit may have
 * gone through without the reply): running, with this claim's token, and a lease expiry set
 * between the first run's start and now (database clock). A locking read over that narrow range
 * of the `claim` index, so that a run whose COMMIT is still in flight is waited for.
 */
async function takenBefore(conn: SqlConnection, t: QueueTables, queue: string, token: number, leaseMicros: number, elapsedUs: number): Promise<ClaimRow[]> {
  const { rows } = await conn.query<ClaimRow>(
    `SELECT ${CLAIM_COLUMNS} FROM ${t.jobs} FORCE INDEX (\`claim\`)
     WHERE ${heldSql('?', '?')} AND \`ready_priority\` = 0 AND \`due_at\` BETWEEN ${NOW_PLUS} AND ${NOW_PLUS} FOR UPDATE`,
    [queue, token, leaseMicros - elapsedUs - WINDOW_SLACK_US, leaseMicros + WINDOW_SLACK_US],
  );
  return rows;
}

/**
 * Whether a claim with `args` may go as one CALL (`claim/call.ts`): no group filter, a queue this
 * handle has not seen rate-limited, not on a node of a multi-writer cluster (the claim lock would
 * serialize only that node's claims), where the procedure may be called (`mayCall`).
 */
export function claimCallable(exec: Executor, t: QueueTables, args: ClaimArgs, state: ClaimState): boolean {
  return args.group === undefined && !state.rated && !exec.dialect.multiWriter && mayCall(exec, t.claimCall);
}

/** A claim's CALL whose reply was lost: it may have committed. */
export const LOST = Symbol('lost');

/** The rows one run of a claim found: `fresh` when this run took them, not an earlier lost run. */
export interface ClaimRows {
  readonly rows: readonly ClaimRow[];
  readonly fresh: boolean;
}

/**
 * One claim call: its fencing token (new and random for each call) and when its first run was
 * sent, shared by every run of it, so that a run retried after a lost connection finds what an
 * earlier run took (`lostBefore`) instead of leaving those jobs leased to nobody.
 */
export class ClaimCall<P> {
  readonly token = newToken();
  private readonly firstRun = performance.now();

  constructor(
    private readonly t: QueueTables,
    private readonly queue: string,
    private readonly args: ClaimArgs,
    private readonly state: ClaimState,
    private readonly joined: boolean,
    private readonly progress: (job: JobRef, value: unknown) => Promise<void>,
  ) {}

  /** One run in the caller's READ COMMITTED transaction (see `claimReady`). */
  async run(conn: SqlConnection): Promise<ClaimRows> {
    this.args.reading?.();
    return { rows: await claimReady(conn, this.t, this.queue, this.args, this.state, this.token, this.joined), fresh: true };
  }

  /**
   * The claim as one CALL (see `claim/call.ts`), for a claim without a group filter of a queue this
   * handle has not seen rate-limited: the rows it leased, or `LOST` when its reply was lost (it may
   * have committed: the caller looks for its rows by token first), or undefined when the caller
   * MUST claim in its own transaction (no procedure; the queue rate-limited or with due jobs to
   * make ready first; a deadlock or lock wait met, after which the call left nothing behind).
   */
  async byCall(exec: Executor): Promise<ClaimRows | typeof LOST | undefined> {
    const { args, state } = this;
    if (!claimCallable(exec, this.t, args, state)) return undefined;
    const ticket = state.cursor.start(undefined);
    const head = state.cursor.head();
    args.reading?.();
    const call = {
      limit: args.limit,
      leaseMicros: args.leaseMicros,
      token: this.token,
      from: ticket.from,
      stale: performance.now() - state.lastPromote >= PROMOTE_EVERY_MS,
    };
    const got = await claimByCall(exec, this.t, this.queue, call).catch((err: unknown) => {
      if (err instanceof TaskrowError && err.code === 'CONNECTION_LOST') return LOST;
      if (err instanceof TaskrowError && err.code === 'RETRIES_EXHAUSTED') return undefined;
      throw err;
    });
    if (got === undefined || got === LOST) return got;
    if (got.state === 'paused') return { rows: [], fresh: true };
    if (got.state !== 'claimed') {
      state.rated = got.state === 'rated';
      return undefined;
    }
    state.cursor.readEnd(undefined, got.head ? head : ticket, got.rows.length, got.last, args.limit);
    return { rows: got.rows, fresh: true };
  }

  /** In a run retried after a lost connection: the jobs an earlier run took, or undefined when none did. */
  async lostBefore(conn: SqlConnection): Promise<ClaimRows | undefined> {
    const before = await takenBefore(conn, this.t, this.queue, this.token, this.args.leaseMicros, Math.ceil((performance.now() - this.firstRun) * 1000));
    return before.length > 0 ? { rows: before, fresh: false } : undefined;
  }

  /** The jobs of what a run found, each with its local lease counted from the first run. */
  jobs({ rows, fresh }: ClaimRows): Job<P>[] {
    const leaseMs = this.args.leaseMicros / 1000;
    return rows.map((r) => {
      const nowMs = toNumber(r.now_us) / 1000;
      const job = jobOf<P>(
        r,
        this.queue,
        this.token,
        toNumber(r.attempt) + (fresh ? 1 : 0),
        fresh ? new Date(nowMs + leaseMs) : new Date(toNumber(r.due_us) / 1000),
        this.progress,
      );
      leaseConfirmed(job, this.firstRun, leaseMs); // every run of this claim was sent after firstRun
      return job;
    });
  }
}

/** A job handed out, from its row: `attempt` counted, leased to `token` until `leaseUntil` (database clock). */
export function jobOf<P>(
  r: ClaimRow,
  queue: string,
  token: number,
  attempt: number,
  leaseUntil: Date,
  progress: (job: JobRef, value: unknown) => Promise<void>,
): Job<P> {
  const job = {
    id: toNumber(r.id),
    queue,
    token,
    payload: decodePayload<P>(r.payload),
    attempt,
    maxAttempts: toNumber(r.max_attempts),
    priority: toNumber(r.priority),
    group: r.grp === '' ? null : r.grp,
    concurrencyKey: r.conc_key ?? null,
    runAt: new Date(toNumber(r.run_us) / 1000),
    leaseUntil,
  };
  // Not enumerable: a job still compares and serializes as its fields.
  Object.defineProperty(job, 'leaseLeft', { value: () => leaseLeft(job as JobRef) });
  Object.defineProperty(job, 'progress', { value: (value: unknown) => progress(job as JobRef, value) });
  return Object.freeze(job) as Job<P>;
}

/**
 * The jobs a ring leased to a sleeper's `token` (see `wake/hand-call.ts`), from the rows its read
 * (sent at `sentAt`, `performance.now()`, after the ring committed) found, with their attempt as
 * the ring counted it. Each lease began at the ring, before that read: it is counted locally from
 * `sentAt` less the part of `leaseMicros` the database says had passed when the read ran
 * (`leaseMicros` - (`due_us` - `now_us`)). The read ran after it was sent, so that start comes no
 * later than the database's, and the local end (see `leaseConfirmed`) before its expiry.
 */
export function handedJobs<P>(
  rows: readonly ClaimRow[],
  queue: string,
  token: number,
  leaseMicros: number,
  sentAt: number,
  progress: (job: JobRef, value: unknown) => Promise<void>,
): Handed<P> {
  const passedUs = Math.max(0, ...rows.map((r) => leaseMicros - (toNumber(r.due_us) - toNumber(r.now_us))));
  const leaseFrom = sentAt - passedUs / 1000;
  const jobs = rows.map((r) => {
    const job = jobOf<P>(r, queue, token, toNumber(r.attempt), new Date(toNumber(r.due_us) / 1000), progress);
    leaseConfirmed(job, leaseFrom, leaseMicros / 1000);
    return job;
  });
  return { jobs, leaseFrom };
}

/**
 * Takes this process's turn to read the ready rows of `queue` from the head, when its claims of
 * `group` read from a place and have not read the head for `CURSOR_MS` (see `cursor.ts`): one
 * autocommit UPDATE of the queue's row that matches only when no claim of any process took the
 * turn within `CURSOR_MS` (database clock). The loser's claims go on from their place (`headRead`);
 * a failed or unanswered turn counts as won (the claim reads the head, as without turns). Not for a
 * joined client, nor for claims of one group (another group's head read would not take its
 * jobs): their claims read the head on their own.
 */
export async function takeHeadTurn(exec: Executor, t: QueueTables, queue: string, cursor: ClaimCursor, group: string | undefined): Promise<void> {
  if (exec.client.joined || group !== undefined || !cursor.headDue(group)) return;
  try {
    const row = perQueue(exec.state, QUEUE_ROWS, t, queue, () => ({ made: false }));
    if (!row.made) {
      await exec.query(`INSERT IGNORE INTO ${t.queues} (\`queue\`) VALUES (?)`, [queue]);
      row.made = true;
    }
    const { affectedRows } = await exec.query(
      `UPDATE ${t.queues} SET \`head_read_at\` = UTC_TIMESTAMP(6)
       WHERE \`queue\` = ? AND (\`head_read_at\` IS NULL OR \`head_read_at\` <= UTC_TIMESTAMP(6) - INTERVAL ${CURSOR_MS * 1000} MICROSECOND)`,
      [queue],
    );
    if (affectedRows === 0) cursor.headRead(group);
  } catch {
    // the claim reads the head
  }
}

/** Per client and queue: whether it made sure of the queue's row (one `INSERT IGNORE` each). */
const QUEUE_ROWS = slot('queue rows made', () => new Map<string, { made: boolean }>());

/**
 * Claims up to `limit` jobs of `queue` (of `group` when given) in one READ COMMITTED transaction:
 * `SELECT ... FOR UPDATE SKIP LOCKED` over the `claim` index range of ready rows (by priority, due
 * time, then group and id), which also reads the gate and whether due jobs wait (`claimReady`),
 * then one UPDATE by primary key that sets the lease expiry (database clock), counts the attempt
 * and sets the claim's fencing token (new and random for each call). Due delayed jobs and expired
 * leases are made ready, and the ready rows read again, when some wait and the read found fewer
 * than `limit` (or this handle has not made any ready for `PROMOTE_EVERY_MS`). MUST NOT take a job
 * from a paused queue, nor more jobs than free rate slots of a rate-limited one. READ COMMITTED
 * takes no gap locks, so producers inserting meanwhile never wait on a claimer; SKIP LOCKED means
 * a claimer never waits on another: the loser of a race for a row simply does not see it. The
 * transaction always ends (COMMIT), also when nothing is found. A run retried after a lost
 * connection first looks for the jobs an earlier run took (`takenBefore`) and returns those, with
 * the same token and attempts counted once, instead of leaving them leased to nobody.
 */
export async function claimJobs<P>(
  exec: Executor,
  t: QueueTables,
  queue: string,
  args: ClaimArgs,
  state: ClaimState,
  progress: (job: JobRef, value: unknown) => Promise<void>,
): Promise<Job<P>[]> {
  if (args.limit === 0) return [];
  await takeHeadTurn(exec, t, queue, state.cursor, args.group);
  const call = new ClaimCall<P>(t, queue, args, state, exec.client.joined, progress);
  const byCall = await call.byCall(exec);
  if (byCall !== undefined && byCall !== LOST) return call.jobs(byCall);
  const found = await exec.attempts(
    (attempt) => async (conn) => (attempt.afterLost || byCall === LOST ? await call.lostBefore(conn) : undefined) ?? (await call.run(conn)),
    {
      isolation: 'READ COMMITTED',
    },
  );
  return call.jobs(found);
}

/** What a claim may find in its way: the queue paused (see `pause.ts`), rate-limited (see `rate.ts`), or due jobs waiting to be made ready. */
interface Gate {
  readonly paused: boolean;
  readonly rated: boolean;
  readonly due: boolean;
}

/**
 * The gate of a claim of `queue` in one statement of non-locking reads of the latest committed
 * rows (claims run READ COMMITTED), so a claim never waits on a change in flight.
 */
async function claimGate(conn: SqlConnection, t: QueueTables, queue: string, due: string): Promise<Gate> {
  const { rows } = await conn.query<{ paused: unknown; rated: unknown; due: unknown }>(
    `SELECT ${pausedSql(t, '?')} AS paused, ${ratedSql(t, '?')} AS rated, ${due} AS due`,
    [queue, queue, queue],
  );
  const r = rows[0];
  return { paused: toNumber(r?.paused) === 1, rated: toNumber(r?.rated) === 1, due: toNumber(r?.due) === 1 };
}

/** A claim's arguments. */
export interface ClaimArgs {
  readonly limit: number;
  readonly leaseMicros: number;
  readonly group: string | undefined;
  /**
   * Called as each run is about to send its first read of the queue: a job whose enqueue
   * committed before the call is seen by that read (see `wake.ts`).
   */
  readonly reading?: (() => void) | undefined;
}

/** A ready row as the gated read returns it: `due` tells whether due jobs wait to be made ready. */
type GatedRow = ClaimRow & { due: unknown };

/**
 * Locks up to `limit` ready rows (`SELECT ... FOR UPDATE SKIP LOCKED` over the `claim` index range
 * of ready rows, by priority, due time, then group and id; from the priority and due time of
 * `from` on when given: rows after `from` with its due time are read again, a plain range). With
 * `gate` (the SQL asking whether due jobs wait, `ClaimState.due`), the same statement also reads
 * the gate: it finds nothing while the queue is paused or rate-limited, and each row carries
 * whether due jobs wait. The subqueries are plain reads: a locking read locks only its outer rows.
 */
async function lockReady(
  conn: SqlConnection,
  t: QueueTables,
  queue: string,
  args: ClaimArgs,
  limit: number,
  gate: GateSql | undefined,
  from?: Position,
): Promise<GatedRow[]> {
  const gated = gate !== undefined;
  const select = lockReadySql(t.jobs, {
    columns: `${CLAIM_COLUMNS}${gated ? `, ${gate.due} AS due` : ''}`,
    queue: '?',
    group: args.group === undefined ? undefined : '?',
    from: from === undefined ? undefined : { priority: '?', dueUs: '?' },
    also: gated ? [`NOT ${pausedSql(t, '?')}`, `NOT ${ratedSql(t, '?')}`] : undefined,
    limit: String(limit),
  });
  const params = [queue, ...(args.group === undefined ? [] : [args.group]), ...(from === undefined ? [] : [from.priority, from.priority, from.dueUs])];
  const { rows } = await conn.query<GatedRow>(gated ? gate.gated(select) : select, gated ? [queue, ...params, queue, queue] : params);
  return rows;
}

/**
 * `lockReady` of `args.limit` rows from where the last full claim of this process ended (see
 * `cursor.ts`), and from the head of the ready rows when that finds fewer (in the same
 * transaction: rows it locked already come back again) or when there is no such place.
 */
async function lockAhead(
  conn: SqlConnection,
  t: QueueTables,
  queue: string,
  args: ClaimArgs,
  cursor: ClaimCursor,
  gate: GateSql | undefined,
): Promise<GatedRow[]> {
  const ticket = cursor.start(args.group);
  if (ticket.from !== undefined) {
    const rows = await lockReady(conn, t, queue, args, args.limit, gate, ticket.from);
    if (rows.length === args.limit) return (cursor.read(args.group, ticket, rows, args.limit), rows);
  }
  const head = cursor.head();
  const rows = await lockReady(conn, t, queue, args, args.limit, gate);
  cursor.read(args.group, head, rows, args.limit);
  return rows;
}

/** Leases the locked rows to `token` (lease expiry on the database clock, one more attempt). */
async function lease(conn: SqlConnection, t: QueueTables, rows: readonly ClaimRow[], leaseMicros: number, token: number): Promise<void> {
  await conn.query(
    `${updateById(t.jobs)} SET ${leaseSet('?', '?')}
     WHERE \`id\` IN (${placeholderList(rows.length)})`,
    [leaseMicros, token, ...rows.map((r) => toNumber(r.id))],
  );
}

/** Makes due jobs ready (see `promote.ts`) and notes when this handle last did. */
async function promote(conn: SqlConnection, t: QueueTables, queue: string, args: ClaimArgs, state: ClaimState, joined: boolean): Promise<number> {
  state.lastPromote = performance.now();
  const made = await promoteDue(conn, t, queue, Math.max(args.limit, PROMOTE_AT_LEAST), joined);
  if (made > 0) state.cursor.rewind(); // their place in line may be behind the cursor
  return made;
}

/**
 * One claim run in the caller's transaction. The common case is one locking read that also reads
 * the gate, then the lease: due jobs are made ready first (and the ready rows read again) only when
 * the read says some are waiting and it found fewer than `limit` rows or this handle has not made
 * due jobs ready for `PROMOTE_EVERY_MS`. A read that finds nothing reads the gate on its own: nothing
 * while the queue is paused; a rate-limited queue takes the rated path (`claimRated`). With
 * `gateApart` the gate is read on its own first, and the locking read carries none of it.
 */
async function claimReady(
  conn: SqlConnection,
  t: QueueTables,
  queue: string,
  args: ClaimArgs,
  state: ClaimState,
  token: number,
  joined: boolean,
): Promise<ClaimRow[]> {
  if (state.rated) return claimRated(conn, t, queue, args, state, token, joined);
  const first = state.gateApart ? await claimGate(conn, t, queue, state.due) : undefined;
  if (first?.paused) return [];
  if (first?.rated) return claimRated(conn, t, queue, args, state, token, joined, first);
  let rows: ClaimRow[] = await lockAhead(conn, t, queue, args, state.cursor, first ? undefined : state);
  const stale = performance.now() - state.lastPromote >= PROMOTE_EVERY_MS;
  if (rows.length === 0) {
    const gate = first ?? (await claimGate(conn, t, queue, state.due));
    if (gate.paused) return [];
    if (gate.rated) return claimRated(conn, t, queue, args, state, token, joined, gate);
    if (!gate.due || (await promote(conn, t, queue, args, state, joined)) === 0) return [];
    rows = await lockAhead(conn, t, queue, args, state.cursor, undefined);
  } else if ((first ? first.due : toNumber((rows[0] as GatedRow).due) === 1) && (rows.length < args.limit || stale)) {
    // Rows this transaction already locked come back again (its own locks are not skipped).
    if ((await promote(conn, t, queue, args, state, joined)) > 0) rows = await lockAhead(conn, t, queue, args, state.cursor, undefined);
  }
  if (rows.length > 0) await lease(conn, t, rows, args.leaseMicros, token);
  return rows;
}

/**
 * A claim of a rate-limited queue (or one this handle last saw rate-limited): no more jobs than it
 * takes free rate slots (and none without one), due jobs made ready when waiting, then the lease.
 * `state.rated` follows what the gate says, so a queue whose limit is removed goes back to the
 * common path.
 */
async function claimRated(
  conn: SqlConnection,
  t: QueueTables,
  queue: string,
  args: ClaimArgs,
  state: ClaimState,
  token: number,
  joined: boolean,
  seen?: Gate,
): Promise<ClaimRow[]> {
  const gate = seen ?? (await claimGate(conn, t, queue, state.due));
  state.rated = gate.rated;
  if (gate.paused) return [];
  if (!gate.rated) return claimReady(conn, t, queue, args, state, token, joined);
  const slots = await takeSlots(conn, t, queue, args.limit);
  if (slots.length === 0) return [];
  if (gate.due) await promote(conn, t, queue, args, state, joined);
  const rows = await lockReady(conn, t, queue, args, slots.length, undefined);
  if (rows.length === 0) return [];
  await lease(conn, t, rows, args.leaseMicros, token);
  await useSlots(conn, t, queue, slots.slice(0, rows.length));
  return rows;
}
