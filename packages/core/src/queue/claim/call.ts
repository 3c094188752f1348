import { slot } from '../../instance.js';
import { performance } from 'node:perf_hooks';
import type { Executor } from '../../engine/executor.js';
import { TaskrowError } from '../../errors.js';
import type { RoutineDialect } from '../../dialect.js';
import { epochMicros } from '../../sql.js';
import { toNumber } from '../../validate.js';
import type { ClaimRow } from '../model/claimed.js';
import type { Position } from '../model/cursor.js';
import { callRows, mayCall } from '../routines/call.js';
import { perQueue } from '../model/registry.js';
import type { QueueTables } from '../model/tables.js';
import { dueSql, leaseSet, pausedSql, ratedSql } from '../model/gate.js';
import type { Routine } from '../routines/routine.js';
import { claimOrder, lockReadySql } from './ready.js';

/** Seconds a claim waits for its queue's claim lock before it claims without it (MySQL takes whole seconds). */
const SERIAL_WAIT_S = 1;
/** Milliseconds a process claims a queue without the claim lock after a wait for it timed out or the server refused it. */
const UNSERIAL_MS = 60_000;

/**
 * Reads (and locks, `lockReadySql`) the ready rows into `v_ids` (ids in claim order), `v_n` and
 * `v_last` (the last row's `priority due_us`); with `from`, only those from `p_from_priority` and
 * `p_from_due` on.
 */
const readReady = (jobs: string, from: boolean): string => {
  const ready = lockReadySql(jobs, {
    columns: `\`id\`, \`ready_priority\`, \`due_at\`, \`grp\`, ${epochMicros('`due_at`')} AS due_us`,
    queue: 'p_queue',
    from: from ? { priority: 'p_from_priority', dueUs: 'p_from_due' } : undefined,
    limit: 'p_limit',
  });
  return `SELECT GROUP_CONCAT(x.\`id\` ORDER BY ${claimOrder('x.')}), COUNT(*),
        SUBSTRING_INDEX(GROUP_CONCAT(CONCAT(x.\`ready_priority\`, ' ', x.due_us) ORDER BY ${claimOrder('x.')}), ',', -1)
      INTO v_ids, v_n, v_last
      FROM (${ready}) AS x;`;
};

/** A leased row's columns as the claim returns them (its attempt as before the lease, as a read before the UPDATE sees it). */
const LEASED_COLUMNS = `\`id\`, \`grp\`, \`conc_key\`, \`priority\`, \`attempt\` - 1 AS \`attempt\`, \`max_attempts\`, \`token\`, \`payload\`,
  ${epochMicros('`run_at`')} AS run_us, ${epochMicros('`due_at`')} AS due_us`;

/** Variables that hold the ids of a claim of a few jobs: its lease and answer then name them in plain statements, not prepared ones. */
const FEW_IDS = ['v_id1', 'v_id2', 'v_id3', 'v_id4', 'v_id5', 'v_id6', 'v_id7', 'v_id8'];

/** The procedure's variables, and its handler: any error rolls back and releases the lock before it reaches the client. */
const DECLARATIONS = `  DECLARE v_lock VARCHAR(64) CHARACTER SET ascii;
  DECLARE v_locked TINYINT DEFAULT 2;
  DECLARE v_state TINYINT DEFAULT 0;
  DECLARE v_paused TINYINT DEFAULT 0;
  DECLARE v_rated TINYINT DEFAULT 0;
  DECLARE v_due TINYINT DEFAULT 0;
  DECLARE v_head TINYINT DEFAULT 1;
  DECLARE v_n INT UNSIGNED DEFAULT 0;
  DECLARE v_ids LONGTEXT CHARACTER SET ascii;
  DECLARE v_last VARCHAR(64) CHARACTER SET ascii;
  DECLARE ${FEW_IDS.join(', ')} BIGINT UNSIGNED;
  DECLARE v_len BIGINT UNSIGNED DEFAULT @@SESSION.group_concat_max_len;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
    ROLLBACK;
    SET SESSION group_concat_max_len = v_len, @taskrow_claim = NULL;
    IF v_locked IN (1, 3) THEN DO RELEASE_LOCK(v_lock); END IF;
    RESIGNAL;
  END;
`;

/**
 * With `p_serial`, the queue's claim lock (`v_locked`: 3 taken at once, 1 taken after a wait, 0
 * waited in vain, 2 refused or not asked for); first the holds an interrupted CALL of this session left.
 */
const takeLock = (prefix: string): string => {
  const lockName = `CONCAT('taskrow:', LEFT(SHA2(CONCAT(DATABASE(), '.', '${prefix}queue_jobs', '.', p_queue), 256), 56))`;
  return `  SET v_lock = ${lockName};
  IF p_serial = 1 THEN
    BEGIN
      DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET v_locked = 2;
      WHILE IS_USED_LOCK(v_lock) = CONNECTION_ID() DO DO RELEASE_LOCK(v_lock); END WHILE;
      SET v_locked = COALESCE(GET_LOCK(v_lock, 0), 0) * 3;
      IF v_locked = 0 THEN SET v_locked = COALESCE(GET_LOCK(v_lock, ${SERIAL_WAIT_S}), 0); END IF;
    END;
  END IF;
`;
};

/** The gate's reads (see `model/gate.ts`) into `v_paused`, `v_rated`, `v_due`. */
const gateReads = (t: QueueTables, d: RoutineDialect): string => `SELECT ${pausedSql(t, 'p_queue')},
    ${ratedSql(t, 'p_queue')},
    ${dueSql(t, d.rangeEndStops, 'p_queue')}
    INTO v_paused, v_rated, v_due;`;

/** The transaction's start and its gate: paused (state 1), rate-limited (2), due jobs to make ready first (3). */
const gate = (t: QueueTables, d: RoutineDialect): string => `  IF v_len < 1048576 THEN SET SESSION group_concat_max_len = 1048576; END IF;
  SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  START TRANSACTION;
  ${gateReads(t, d)}
  IF v_paused = 1 THEN
    SET v_state = 1;
  ELSEIF v_rated = 1 THEN
    SET v_state = 2;
  ELSEIF v_due = 1 AND p_stale = 1 THEN
    SET v_state = 3;
  ELSE
`;

/** The locking read (from the place given, then from the head when that finds fewer) and the lease of what it found. */
const readAndLease = (t: QueueTables): string => `    IF p_from_priority IS NOT NULL THEN
      ${readReady(t.jobs, true)}
      SET v_head = v_n < p_limit;
    END IF;
    IF v_head = 1 THEN
      ${readReady(t.jobs, false)}
    END IF;
    IF v_due = 1 AND v_n < p_limit THEN
      SET v_state = 3, v_ids = NULL;
    ELSEIF v_n > 0 AND v_n <= ${FEW_IDS.length} THEN
      SET ${FEW_IDS.map((v, i) => `${v} = IF(v_n > ${i}, SUBSTRING_INDEX(SUBSTRING_INDEX(v_ids, ',', ${i + 1}), ',', -1), NULL)`).join(',\n        ')};
      UPDATE ${t.jobs} FORCE INDEX (PRIMARY) SET ${leaseSet('p_lease', 'p_token')} WHERE \`id\` IN (${FEW_IDS.join(', ')});
    ELSEIF v_n > 0 THEN
      SET @taskrow_claim = CONCAT('UPDATE ${t.jobs} FORCE INDEX (PRIMARY) SET ${leaseSet("', p_lease, '", "', p_token, '")} WHERE \`id\` IN (', v_ids, ')');
      PREPARE taskrow_claim FROM @taskrow_claim;
      EXECUTE taskrow_claim;
      DEALLOCATE PREPARE taskrow_claim;
    END IF;
  END IF;
`;

/**
 * With the claim lock held, a claim that would read from its process's place reads from the
 * fleet's instead: where the last claim that held the lock ended (NULL there: at the head). A
 * queue without a row keeps the process's place.
 */
const fleetFrom = (t: QueueTables): string => `    IF p_from_priority IS NOT NULL AND v_locked IN (1, 3) THEN
      SELECT IF(c.\`queue\` IS NULL, p_from_priority, c.\`priority\`), IF(c.\`queue\` IS NULL, p_from_due, c.\`due_us\`) INTO p_from_priority, p_from_due
        FROM (SELECT 1 AS one) AS o LEFT JOIN ${t.cursors} AS c ON c.\`queue\` = p_queue;
    END IF;
`;

/** The fleet's place after a claim that held the lock: its read's last row when it was full, else NULL (no backlog left: the next reads the head). */
const fleetTo = (t: QueueTables): string => {
  const part = (n: number): string => `IF(v_n >= p_limit, SUBSTRING_INDEX(v_last, ' ', ${n}), NULL)`;
  return `  IF v_state = 0 AND v_locked IN (1, 3) THEN
    INSERT INTO ${t.cursors} (\`queue\`, \`priority\`, \`due_us\`) VALUES (p_queue, ${part(1)}, ${part(-1)})
      ON DUPLICATE KEY UPDATE \`priority\` = ${part(1)}, \`due_us\` = ${part(-1)};
  END IF;
`;
};

/** The end of the transaction and of the lock. */
const MID = `  IF v_state = 0 THEN COMMIT; ELSE ROLLBACK; SET v_ids = NULL; END IF;
  SET SESSION group_concat_max_len = v_len;
  IF v_locked IN (1, 3) THEN DO RELEASE_LOCK(v_lock); END IF;
`;

/** The status columns the answer's rows begin with, a claim's (state 0) that leased jobs. */
const LEASED_STATUS = '0 AS `state`, v_head AS `head`, v_due AS `due`, v_last AS `last`, v_locked AS `locked`';

/**
 * The read-back of more than 8 leased jobs: a join of the ids of `v_ids` as a `JSON_TABLE` with
 * the jobs by primary key, in the list's order (no statement prepared per claim, no `FIELD()`
 * sort; 125-345 microseconds less server time per read-back of 100 jobs than a prepared
 * statement naming the ids, measured on MySQL 9.7, MariaDB 10.11 and 11.8).
 */
const readBack = (t: QueueTables): string => `    SELECT ${LEASED_STATUS},
      ${LEASED_COLUMNS}, ${epochMicros('`due_at`')} - p_lease AS now_us
      FROM JSON_TABLE(CONCAT('[', v_ids, ']'), '$[*]' COLUMNS (\`ord\` FOR ORDINALITY, \`kid\` BIGINT UNSIGNED PATH '$')) AS k
      STRAIGHT_JOIN ${t.jobs} AS j ON j.\`id\` = k.\`kid\`
      WHERE j.\`token\` = p_token ORDER BY k.\`ord\`;
`;

/** The answer: one status row when nothing was leased, else the leased rows (read back by id, in claim order) with the status on each. */
const answer = (t: QueueTables): string => `  IF v_ids IS NULL THEN
    SELECT v_state AS \`state\`, v_head AS \`head\`, v_due AS \`due\`, v_last AS \`last\`, v_locked AS \`locked\`, NULL AS \`id\`;
  ELSEIF v_n <= ${FEW_IDS.length} THEN
    SELECT ${LEASED_STATUS},
      ${LEASED_COLUMNS}, ${epochMicros('`due_at`')} - p_lease AS now_us FROM ${t.jobs} FORCE INDEX (PRIMARY)
      WHERE \`id\` IN (${FEW_IDS.join(', ')}) AND \`token\` = p_token ORDER BY FIELD(\`id\`, ${FEW_IDS.join(', ')});
  ELSE
${readBack(t)}  END IF;
`;

/**
 * `CALL <prefix>claim_jobs(queue, limit, lease, token, from_priority, from_due, stale, serial)`: a
 * claim of ready jobs as one statement, for the common claim (no group filter, a queue not
 * rate-limited: see `claimByCall`). In the server, in the order the client would send it: with
 * `serial`, the queue's claim lock (a named lock, `GET_LOCK`, waited on 1 s at most: claims of a
 * queue then enter InnoDB one at a time, instead of 32 claimers skip-reading each other's rows and
 * the entries purge has not removed yet; one that does not get it claims all the same), then at
 * READ COMMITTED the gate (paused, rate-limited, due jobs waiting: plain reads), the locking read of
 * up to `limit` ready rows (`FOR UPDATE SKIP LOCKED`, from the fleet's place when the lock is held,
 * else from the priority and due time given, then from the head when that finds fewer), the lease
 * (token, lease expiry on the database clock, one more attempt), the fleet's place kept, COMMIT,
 * the lock released, and last the leased rows, read back by id in claim order (so the lock is
 * never held while the server writes to the network). It leases nothing and answers a state
 * instead when the queue is paused (1), rate-limited (2) or has due jobs to make ready first (3:
 * `stale`, or the read found fewer than `limit`): the client then claims in its own transaction.
 * One result set, at least one row: `state`, `head` (the read began at the head), `due`, `last`,
 * `locked` (3 got the lock at once, 1 after a wait, 0 waited in vain, 2 refused or not asked for),
 * then the job columns (NULL on the one row of an empty claim). Any error rolls back and releases
 * the lock before it reaches the client. `SQL SECURITY INVOKER`.
 *
 * The fleet's place: claims of a queue take turns through the lock, so each begins where the one
 * before it ended (`<prefix>queue_cursors`, written in the claim's transaction; NULL after a short
 * read) instead of walking the index entries of the rows every other process claimed since its
 * own last claim. A claim with no place of its own still reads from the head, and so do claims
 * without the lock; what a place may pass over is taken by a read that comes back short and by the
 * fleet's turn at the head about once a second (see `cursor.ts`).
 */
export const CLAIM_JOBS_ROUTINE: Routine = {
  name: (t) => t.claimCall,
  create: (t, d, prefix) => `CREATE PROCEDURE ${t.claimCall}(
  IN p_queue VARCHAR(64) CHARACTER SET ascii, IN p_limit INT UNSIGNED, IN p_lease BIGINT UNSIGNED, IN p_token BIGINT UNSIGNED,
  IN p_from_priority SMALLINT, IN p_from_due BIGINT, IN p_stale TINYINT, IN p_serial TINYINT)
MODIFIES SQL DATA SQL SECURITY INVOKER COMMENT 'taskrow: one claim of ready jobs'
BEGIN
${DECLARATIONS}${takeLock(prefix)}${gate(t, d)}${fleetFrom(t)}${readAndLease(t)}${fleetTo(t)}${MID}${answer(t)}  SET @taskrow_claim = NULL;
END`,
};

/** A row of the procedure's answer: the claim's outcome, and a leased job (columns NULL when none). */
interface CallRow extends ClaimRow {
  state: unknown;
  head: unknown;
  due: unknown;
  last: unknown;
  locked: unknown;
}

/** What a claim by CALL found. */
export type CallClaim =
  | { readonly state: 'claimed'; readonly rows: readonly CallRow[]; readonly head: boolean; readonly last: Position | undefined }
  | { readonly state: 'paused' | 'rated' | 'due' };

/** Claims in a row that found their queue's claim lock free after which a process counts itself alone on the queue. */
const ALONE_AFTER = 10;
/** Milliseconds a process that counts itself alone on a queue keeps doing so. */
const ALONE_MS = 1000;

/** Per client and queue: what its claims' CALLs found of the claim lock. */
interface LockSeen {
  /** No claim lock asked for before this (`performance.now()`). */
  unserialUntil: number;
  /** Claims in a row that found the lock free. */
  free: number;
  /** Alone on the queue until this (`performance.now()`): see `aloneOn`. */
  aloneUntil: number;
}

const SEEN = slot('claim lock seen', () => new Map<string, LockSeen>());

const seenOf = (exec: Executor, t: QueueTables, queue: string): LockSeen =>
  perQueue(exec.state, SEEN, t, queue, () => ({ unserialUntil: -Infinity, free: 0, aloneUntil: -Infinity }));

/**
 * Whether this process counts itself alone on `queue`: its last `ALONE_AFTER` claim CALLs each
 * found the claim lock free, within the last `ALONE_MS` (then its claims, found short of
 * contention, may share a transaction with a completion that does not ride in the claim's CALL:
 * see `complete-claim.ts`).
 */
export function aloneOn(exec: Executor, t: QueueTables, queue: string): boolean {
  return performance.now() < seenOf(exec, t, queue).aloneUntil;
}

/** Notes what a CALL found of the lock (`locked` as the procedure answers it). */
function noteLock(s: LockSeen, asked: boolean, locked: number): void {
  if (!asked) return;
  if (locked === 0 || locked === 2) s.unserialUntil = performance.now() + UNSERIAL_MS;
  s.free = locked === 3 ? s.free + 1 : 0;
  if (s.free >= ALONE_AFTER) [s.free, s.aloneUntil] = [0, performance.now() + ALONE_MS];
}

/** The claim's arguments as the procedure takes them. */
export interface CallArgs {
  readonly limit: number;
  readonly leaseMicros: number;
  readonly token: number;
  readonly from: Position | undefined;
  readonly stale: boolean;
}

/**
 * One claim of `queue` by `CALL <prefix>claim_jobs(...)` (see `CLAIM_JOBS_ROUTINE`), sent once:
 * a failure reaches the caller unretried, and the caller claims in its own transaction then (after
 * a lost reply, looking first for what this call leased by its token). Undefined, having run
 * nothing, when the procedure cannot be called (`mayCall`). For `UNSERIAL_MS` after a wait for
 * the claim lock timed out or the server refused the lock, the claim does without it (as on a node
 * of a multi-writer cluster, were a claim called there).
 */
export async function claimByCall(exec: Executor, t: QueueTables, queue: string, args: CallArgs): Promise<CallClaim | undefined> {
  if (!mayCall(exec, t.claimCall)) return undefined;
  const lock = seenOf(exec, t, queue);
  const useLock = !exec.dialect.multiWriter && performance.now() >= lock.unserialUntil;
  const from = args.from;
  const rows = await callRows<CallRow>(exec.once(), t.claimCall, [
    queue,
    args.limit,
    args.leaseMicros,
    args.token,
    from?.priority ?? null,
    from?.dueUs ?? null,
    args.stale ? 1 : 0,
    useLock ? 1 : 0,
  ]);
  if (rows === undefined) return undefined;
  const first = rows[0];
  if (first === undefined) throw new TaskrowError('DATABASE_ERROR', `${t.claimCall} returned no row (queue ${JSON.stringify(queue)})`);
  const state = toNumber(first.state);
  noteLock(lock, useLock, toNumber(first.locked));
  if (state !== 0) return { state: state === 1 ? 'paused' : state === 2 ? 'rated' : 'due' };
  const leased = rows.filter((r) => r.id !== null && r.id !== undefined);
  return { state: 'claimed', rows: leased, head: toNumber(first.head) === 1, last: position(first.last) };
}

/** The `priority due_us` text of the read's last row as a position. */
function position(last: unknown): Position | undefined {
  const text = Buffer.isBuffer(last) ? last.toString('latin1') : typeof last === 'string' ? last : undefined;
  const [priority, dueUs] = (text ?? '').split(' ').map(Number);
  return Number.isSafeInteger(priority) && Number.isSafeInteger(dueUs) ? { priority: priority!, dueUs: dueUs! } : undefined;
}
