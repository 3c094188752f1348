import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { placeholderList } from '../chunk.js';
import type { Executor } from '../engine/executor.js';
import type { SqlConnection } from '../port.js';
import { toNumber } from '../validate.js';
import { keepDeadKeys } from './dead-keys.js';
import { decodePayload } from './payload.js';
import { DUE_ROWS, epochMicros, NOW_MICROS, NOW_PLUS, PHASE, updateById, type QueueTables } from './tables.js';
import { leaseConfirmed, leaseLeft } from './local-lease.js';
import { takeSlots, useSlots } from './rate.js';
import { admit, lockKeys } from './limits.js';
import type { Job, JobRef } from './types.js';

interface ClaimRow {
  id: unknown;
  grp: string;
  conc_key: string | null;
  priority: unknown;
  attempt: unknown;
  max_attempts: unknown;
  token: unknown;
  payload: unknown;
  run_us: unknown;
  due_us: unknown;
  now_us: unknown;
}

/** An expired lease on the job's last attempt: the job dies instead of coming back. */
const SPENT = `\`phase\` = ${PHASE.running} AND \`attempt\` >= \`max_attempts\``;

/** A due row as `promoteDue` locks it. */
interface DueRow {
  id: unknown;
  keyed_death: unknown;
  spent: unknown;
  waiting: unknown;
  conc_key: string | null;
}

/**
 * Makes up to `limit` due delayed jobs and expired leases ready (or dead, for a lease that expired
 * on the last attempt), in the caller's transaction; resolves to the number made ready. A plain
 * read of the `claim` index range of due rows comes first (in the common case nothing is due and
 * nothing gets locked), then the rows found are locked by primary key, skipping rows others hold,
 * and updated by primary key. Jobs with a concurrency key that come due, or die, need their key's
 * lock (taken skipping keys others hold: such jobs wait for a later claim): the due ones are
 * admitted into free slots or blocked (`admit`); an expired lease that comes back keeps its slot.
 * Assignments are ordered so each reads only columns not yet assigned (MySQL assigns left to right).
 */
async function promoteDue(conn: SqlConnection, t: QueueTables, queue: string, limit: number, joined: boolean): Promise<number> {
  // A plain read first: in the common case nothing is due and nothing is locked.
  const seen = await conn.query<{ id: unknown }>(`SELECT \`id\` FROM ${t.jobs} FORCE INDEX (\`claim\`) WHERE ${DUE_ROWS} LIMIT ${limit}`, [queue]);
  if (seen.rows.length === 0) return 0;
  const { rows } = await conn.query<DueRow>(
    `SELECT \`id\`, \`conc_key\`, (${SPENT} AND \`dedup_k\` IS NOT NULL) AS keyed_death, ${SPENT} AS spent, \`phase\` = ${PHASE.delayed} AS waiting
     FROM ${t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` IN (${placeholderList(seen.rows.length)}) AND ${DUE_ROWS} FOR UPDATE SKIP LOCKED`,
    [...seen.rows.map((r) => toNumber(r.id)), queue],
  );
  if (rows.length === 0) return 0;
  const needsKey = (r: DueRow): boolean => r.conc_key !== null && (toNumber(r.waiting) === 1 || toNumber(r.spent) === 1);
  const keyed = rows.filter(needsKey);
  const limits = keyed.length === 0 ? new Map<string, number>() : await lockKeys(conn, t, queue, keyed.map((r) => r.conc_key!), true);
  const plain = rows.filter((r) => !needsKey(r) || (toNumber(r.spent) === 1 && limits.has(r.conc_key!)));
  const ids = plain.map((r) => toNumber(r.id));
  if (plain.some((r) => toNumber(r.keyed_death) === 1)) await keepDeadKeys(conn, t, ids, SPENT);
  if (ids.length > 0) {
    await conn.query(
      `${updateById(t.jobs)} SET
         \`last_error\` = IF(${SPENT}, CONCAT('lease expired on attempt ', \`attempt\`, ' of ', \`max_attempts\`), \`last_error\`),
         \`dedup_k\` = IF(${SPENT}, NULL, \`dedup_k\`),
         \`due_at\` = IF(${SPENT}, UTC_TIMESTAMP(6), \`run_at\`),
         \`ready_priority\` = IF(${SPENT}, 0, \`priority\`),
         \`phase\` = IF(${SPENT}, ${PHASE.dead}, ${PHASE.ready})
       WHERE \`id\` IN (${placeholderList(ids.length)})`,
      ids,
    );
  }
  if (limits.size === 0) return ids.length;
  const due = new Map<string, number[]>();
  for (const r of keyed) if (toNumber(r.waiting) === 1 && limits.has(r.conc_key!)) due.set(r.conc_key!, [...(due.get(r.conc_key!) ?? []), toNumber(r.id)]);
  // In the application's transaction the snapshot may predate the key locks: count with locking reads.
  return ids.length + (await admit(conn, t, queue, limits, due, joined));
}

/**
 * Most due rows one look takes at least, whatever the claim's limit: a claimer of one job at a
 * time would otherwise admit jobs with concurrency keys (and make due jobs ready) one per claim.
 */
const PROMOTE_AT_LEAST = 100;

/** How often (ms) a queue handle looks for due delayed jobs and expired leases while its claims find enough ready jobs. */
export const PROMOTE_EVERY_MS = 50;

/** Per queue handle: when it last looked for due jobs (`performance.now()`). */
export interface ClaimState {
  lastPromote: number;
}

/** The columns a claim reads, `run_at` and `due_at` as epoch microseconds. */
const CLAIM_COLUMNS = `\`id\`, \`grp\`, \`conc_key\`, \`priority\`, \`attempt\`, \`max_attempts\`, \`token\`, \`payload\`,
  ${epochMicros('`run_at`')} AS run_us, ${epochMicros('`due_at`')} AS due_us, ${NOW_MICROS} AS now_us`;

/** A new fencing token: random, so that the jobs one claim took can be found by it. */
const newToken = (): number => randomInt(1, 2 ** 48);

/** Slack (µs) around the window in which a lost claim set its leases' expiry. */
const WINDOW_SLACK_US = 1_000_000;

/**
 * The jobs an earlier run of this claim took before its connection was lost (its commit may have
 * gone through without the reply): running, with this claim's token, and a lease expiry set
 * between the first run's start and now (database clock). A locking read over that narrow range
 * of the `claim` index, so that a run whose COMMIT is still in flight is waited for.
 */
async function takenBefore(conn: SqlConnection, t: QueueTables, queue: string, token: number, leaseMicros: number, elapsedUs: number): Promise<ClaimRow[]> {
  const { rows } = await conn.query<ClaimRow>(
    `SELECT ${CLAIM_COLUMNS} FROM ${t.jobs} FORCE INDEX (\`claim\`)
     WHERE \`queue\` = ? AND \`phase\` = ${PHASE.running} AND \`ready_priority\` = 0
       AND \`due_at\` BETWEEN ${NOW_PLUS} AND ${NOW_PLUS} AND \`token\` = ? FOR UPDATE`,
    [queue, leaseMicros - elapsedUs - WINDOW_SLACK_US, leaseMicros + WINDOW_SLACK_US, token],
  );
  return rows;
}

/**
 * Claims up to `limit` jobs of `queue` (of `group` when given) in one READ COMMITTED transaction:
 * `SELECT ... FOR UPDATE SKIP LOCKED` over the `claim` index range of ready rows (by priority, due
 * time, then group and id), then one UPDATE by primary key that sets the lease expiry (database
 * clock), counts the attempt and sets the claim's fencing token (new and random for each call).
 * Due delayed jobs and expired leases are made ready first when this handle has not looked for
 * them for `PROMOTE_EVERY_MS`, and always when fewer than `limit` ready jobs were found (then the
 * claim reads again). READ COMMITTED takes no gap locks, so producers inserting meanwhile never
 * wait on a claimer; SKIP LOCKED means a claimer never waits on another. The transaction always
 * ends (COMMIT), also when nothing is found. A run retried after a lost connection first looks
 * for the jobs an earlier run took (`takenBefore`) and returns those, with the same token and
 * attempts counted once, instead of leaving them leased to nobody.
 */
export async function claimJobs<P>(
  exec: Executor,
  t: QueueTables,
  queue: string,
  args: { limit: number; leaseMicros: number; group: string | undefined },
  state: ClaimState,
  progress: (job: JobRef, value: unknown) => Promise<void>,
): Promise<Job<P>[]> {
  if (args.limit === 0) return [];
  const token = newToken();
  const firstRun = performance.now();
  const { rows, fresh } = await exec.attempts((attempt) => async (conn) => {
    if (attempt.afterLost) {
      const before = await takenBefore(conn, t, queue, token, args.leaseMicros, Math.ceil((performance.now() - firstRun) * 1000));
      if (before.length > 0) return { rows: before, fresh: false };
    }
    return { rows: await claimReady(conn, t, queue, args, state, token, exec.client.joined), fresh: true };
  }, { isolation: 'READ COMMITTED' });
  const leaseMs = args.leaseMicros / 1000;
  return rows.map((r) => {
    const nowMs = toNumber(r.now_us) / 1000;
    const job = {
      id: toNumber(r.id),
      queue,
      token,
      payload: decodePayload<P>(r.payload),
      attempt: toNumber(r.attempt) + (fresh ? 1 : 0),
      maxAttempts: toNumber(r.max_attempts),
      priority: toNumber(r.priority),
      group: r.grp === '' ? null : r.grp,
      concurrencyKey: r.conc_key ?? null,
      runAt: new Date(toNumber(r.run_us) / 1000),
      leaseUntil: fresh ? new Date(nowMs + leaseMs) : new Date(toNumber(r.due_us) / 1000),
    };
    // Not enumerable: a job still compares and serializes as its fields.
    Object.defineProperty(job, 'leaseLeft', { value: () => leaseLeft(job as JobRef) });
    Object.defineProperty(job, 'progress', { value: (value: unknown) => progress(job as JobRef, value) });
    leaseConfirmed(job, firstRun, leaseMs); // every run of this claim was sent after firstRun
    return Object.freeze(job) as Job<P>;
  });
}

/**
 * What a claim of `queue` reads first, in one statement: whether the queue is paused (see
 * `pause.ts`) and whether it is rate-limited (see `rate.ts`). Non-locking reads of the latest
 * committed rows (claims run READ COMMITTED), so a claim never waits on a change in flight.
 */
async function claimGate(conn: SqlConnection, t: QueueTables, queue: string): Promise<{ paused: boolean; rated: boolean }> {
  const { rows } = await conn.query<{ paused: unknown; rated: unknown }>(
    `SELECT EXISTS (SELECT 1 FROM ${t.queues} WHERE \`queue\` = ? AND \`paused_at\` IS NOT NULL) AS paused,
       EXISTS (SELECT 1 FROM ${t.rateSlots} WHERE \`queue\` = ?) AS rated`,
    [queue, queue],
  );
  return { paused: toNumber(rows[0]?.paused) === 1, rated: toNumber(rows[0]?.rated) === 1 };
}

/**
 * One claim run in the caller's transaction: nothing while the queue is paused; for a rate-limited
 * queue, no more jobs than it takes free rate slots (and none without one); promote what is due,
 * lock ready rows, lease them to `token`.
 */
async function claimReady(
  conn: SqlConnection,
  t: QueueTables,
  queue: string,
  args: { limit: number; leaseMicros: number; group: string | undefined },
  state: ClaimState,
  token: number,
  joined: boolean,
): Promise<ClaimRow[]> {
  const ready = (): Promise<{ rows: ClaimRow[] }> =>
    conn.query<ClaimRow>(
      `SELECT ${CLAIM_COLUMNS}
       FROM ${t.jobs} FORCE INDEX (\`claim\`)
       WHERE \`queue\` = ?${args.group === undefined ? '' : ' AND `grp` = ?'} AND \`phase\` = ${PHASE.ready}
       ORDER BY \`ready_priority\`, \`due_at\`, \`grp\`, \`id\` LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
      args.group === undefined ? [queue] : [queue, args.group],
    );
  const gate = await claimGate(conn, t, queue);
  if (gate.paused) return [];
  const slots = gate.rated ? await takeSlots(conn, t, queue, args.limit) : [];
  if (gate.rated && slots.length === 0) return [];
  const limit = gate.rated ? slots.length : args.limit;
  const started = performance.now();
  let looked = started - state.lastPromote >= PROMOTE_EVERY_MS;
  if (looked) await promoteDue(conn, t, queue, Math.max(args.limit, PROMOTE_AT_LEAST), joined);
  let found = await ready();
  if (found.rows.length < limit && !looked) {
    looked = true;
    // Rows this transaction already locked come back again (its own locks are not skipped).
    if ((await promoteDue(conn, t, queue, Math.max(args.limit, PROMOTE_AT_LEAST), joined)) > 0) found = await ready();
  }
  if (looked) state.lastPromote = started;
  if (found.rows.length === 0) return [];
  await conn.query(
    `${updateById(t.jobs)} SET \`due_at\` = ${NOW_PLUS}, \`attempt\` = \`attempt\` + 1, \`token\` = ?, \`ready_priority\` = 0, \`phase\` = ${PHASE.running}
     WHERE \`id\` IN (${placeholderList(found.rows.length)})`,
    [args.leaseMicros, token, ...found.rows.map((r) => toNumber(r.id))],
  );
  await useSlots(conn, t, queue, slots.slice(0, found.rows.length));
  return found.rows;
}
