import type { Executor } from '../engine/executor.js';
import { byDigest, type ResKey } from './names.js';
import { recordEdges, type Edge } from './history.js';
import { blockedKeys, type LockRow } from './rules.js';
import { bin, createKeyRows, deleteLockRows, holderLocks, lockKeyRows, NOW, PRESENT, readLocks, runs, writeKeyRows } from './sql.js';
import type { ResourcesTables } from './tables.js';
import type { KeyReason, LostReason } from './types.js';
import { placeholderList } from '../chunk.js';
import { TaskrowError } from '../errors.js';
import { RollBack } from '../retry.js';
import type { SqlConnection } from '../port.js';

/** One job's keys for one acquisition. */
export interface Claim {
  readonly job: ResKey;
  readonly holder: Buffer;
  readonly owner: string;
  readonly inputs: readonly ResKey[];
  readonly outputs: readonly ResKey[];
}

/** Every key of a claim, in lock order. */
export function sortedKeys(c: Pick<Claim, 'inputs' | 'outputs'>): ResKey[] {
  return [...c.inputs, ...c.outputs].sort(byDigest);
}

const LOCKING = { isolation: 'READ COMMITTED' } as const;

/**
 * One attempt to take every lock of `claim`, in one READ COMMITTED transaction: lock the key rows
 * in digest order, read their lock rows (every change to a key's lock rows happens while its key
 * row is locked, so this read is current), apply the rules, then write the key rows (so a cluster
 * with several writable nodes certifies the lock: `writeKeyRows`), reader and writer rows, the job
 * row and the history edges. All or nothing: a blocked attempt writes nothing (so a job polling for
 * busy keys never makes their holder's acquisition fail certification). Retried whole on deadlock
 * and on a certification failure; a retry after a commit whose reply was lost finds its own rows
 * and rewrites them. Refresh and release need no key row write: every lock row they change is one
 * a competing acquirer would also write (a stale lock it deletes), so a cluster certifies that race.
 */
export async function tryAcquire(
  exec: Executor,
  t: ResourcesTables,
  claim: Claim,
  leaseMicros: number,
  overwrite: boolean,
  edges: readonly Edge[],
): Promise<KeyReason[]> {
  const keys = sortedKeys(claim);
  for (let round = 0; ; round++) {
    const outcome = await exec.transaction(async (conn): Promise<{ missing: ResKey[] } | { blocked: KeyReason[] }> => {
      const rows = await lockKeyRows(conn, t, keys);
      const locks = await readLocks(conn, t, keys);
      // An input without a row was never produced: that is a reason, not a row to create.
      const blocked = blockedKeys(claim.inputs, claim.outputs, { present: rows.present, locks }, claim.holder.toString('binary'), overwrite);
      if (blocked.length > 0) return { blocked };
      const missing = claim.outputs.filter((k) => !rows.found.has(k.id));
      if (missing.length > 0) return { missing };
      await writeKeyRows(conn, t, keys, rows.found);
      const stale = locks.filter((l) => !l.live && l.holder !== claim.holder.toString('binary'));
      if (stale.length > 0)
        await deleteLockRows(
          conn,
          t,
          stale.map((l) => ({ h: bin(l.id), holder: bin(l.holder) })),
        );
      const writers = new Set(claim.outputs.map((k) => k.id));
      for (const part of runs(keys, 500)) {
        await conn.query(
          `INSERT INTO ${t.locks} (\`h\`, \`holder\`, \`mode\`, \`lease_until\`) VALUES ${part
            .map(() => `(?, ?, ?, ${NOW} + INTERVAL ? MICROSECOND)`)
            .join(', ')} ON DUPLICATE KEY UPDATE \`lease_until\` = ${NOW} + INTERVAL ? MICROSECOND`,
          [...part.flatMap((k) => [k.h, claim.holder, writers.has(k.id) ? 'writer' : 'reader', leaseMicros]), leaseMicros],
        );
      }
      await conn.query(
        `INSERT INTO ${t.jobs} (\`holder\`, \`job\`, \`owner\`, \`acquired_at\`, \`lease_until\`)
         VALUES (?, ?, ?, ${NOW}, ${NOW} + INTERVAL ? MICROSECOND)
         ON DUPLICATE KEY UPDATE \`lease_until\` = ${NOW} + INTERVAL ? MICROSECOND`,
        [claim.holder, claim.job.bytes, claim.owner, leaseMicros, leaseMicros],
      );
      await recordEdges(conn, t, edges);
      return { blocked: [] };
    }, LOCKING);
    if ('blocked' in outcome) return outcome.blocked;
    // First use of some outputs: create their rows outside the locking transaction, then lock again.
    if (round > 3) throw new TaskrowError('DATABASE_ERROR', `rows of ${claim.outputs.length} output keys keep disappearing from ${t.keys}`);
    await createKeyRows((sql, params) => exec.query(sql, params), t, outcome.missing);
  }
}

/** Locks of `claim` no longer held by it: missing or past their lease. */
function lostLocks(claim: Pick<Claim, 'inputs' | 'outputs'>, mine: readonly LockRow[]): KeyReason<LostReason>[] {
  const live = new Map<string, LockRow['mode']>();
  for (const l of mine) if (l.live) live.set(l.id, l.mode);
  const lost: KeyReason<LostReason>[] = [];
  for (const k of claim.inputs) if (live.get(k.id) !== 'reader') lost.push({ key: k.key, reason: 'input_lock_lost' });
  for (const k of claim.outputs) if (live.get(k.id) !== 'writer') lost.push({ key: k.key, reason: 'output_lock_lost' });
  return lost;
}

/**
 * jobs.py's checks at refresh, over the key rows locked by this transaction: an input that no
 * longer exists is lost; an output produced meanwhile is lost to a job that does not overwrite.
 */
function invalidated(claim: Pick<Claim, 'inputs' | 'outputs'>, present: ReadonlySet<string>, overwrite: boolean): KeyReason<LostReason>[] {
  const out: KeyReason<LostReason>[] = [];
  for (const k of claim.inputs) if (!present.has(k.id)) out.push({ key: k.key, reason: 'input_lock_lost' });
  if (!overwrite) for (const k of claim.outputs) if (present.has(k.id)) out.push({ key: k.key, reason: 'output_exists' });
  return out;
}

/**
 * Extends the lease of every lock of `claim`, with its key rows locked (so no other job can take a
 * lock this refresh is about to extend), as jobs.py does: when any lock was lost (missing or past
 * its lease), any input no longer exists, or (without `overwrite`) any output was produced
 * meanwhile, nothing is extended and the call resolves to those keys and reasons; lost locks stay lost.
 */
export async function refreshLocks(
  exec: Executor,
  t: ResourcesTables,
  claim: Claim,
  leaseMicros: number,
  overwrite: boolean,
): Promise<KeyReason<LostReason>[]> {
  const keys = sortedKeys(claim);
  return exec.transaction(async (conn) => {
    const rows = await lockKeyRows(conn, t, keys);
    const mine = await holderLocks(conn, t, claim.holder);
    const lost = lostLocks(claim, mine);
    const gone = new Set(lost.map((l) => l.key));
    for (const r of invalidated(claim, rows.present, overwrite)) if (!gone.has(r.key)) lost.push(r);
    if (lost.length > 0) return lost;
    const keep = mine.filter((l) => l.live).map((l) => bin(l.id));
    for (const part of runs(keep)) {
      await conn.query(
        `UPDATE ${t.locks} SET \`lease_until\` = ${NOW} + INTERVAL ? MICROSECOND WHERE \`holder\` = ? AND \`h\` IN (${placeholderList(part.length)})`,
        [leaseMicros, claim.holder, ...part],
      );
    }
    await conn.query(`UPDATE ${t.jobs} SET \`lease_until\` = ${NOW} + INTERVAL ? MICROSECOND WHERE \`holder\` = ?`, [leaseMicros, claim.holder]);
    return lost;
  }, LOCKING);
}

/** What a release did. */
export interface Released {
  readonly lost: KeyReason<LostReason>[];
  /** Outputs were marked as existing. */
  readonly produced: boolean;
}

/** Ends the fast release path's transaction (rolled back) when some lock was not live. Never escapes. */
class NotAllLive extends RollBack {}

/** Marks `outputs` as existing now, produced by `job`, expiring after `ttlMicros` when given. */
async function markProduced(conn: SqlConnection, t: ResourcesTables, outputs: readonly ResKey[], job: ResKey, ttlMicros: number | null): Promise<void> {
  const expires = ttlMicros === null ? 'NULL' : `${NOW} + INTERVAL ? MICROSECOND`;
  for (const part of runs([...outputs].sort(byDigest))) {
    await conn.query(
      `UPDATE ${t.keys} SET \`produced_at\` = ${NOW}, \`expires_at\` = ${expires}, \`produced_by\` = ? WHERE \`h\` IN (${placeholderList(part.length)})`,
      [...(ttlMicros === null ? [] : [ttlMicros]), job.bytes, ...part.map((k) => k.h)],
    );
  }
}

/**
 * Releases every lock of `claim` in one transaction. When `succeeded` and no lock was lost, marks
 * the outputs as existing (expiring after `ttlMicros` when given).
 *
 * Fast path: delete the holder's live lock rows in one statement; when all of them were live, the
 * delete itself is the check (those rows stay locked until commit, and any other job reading them
 * still sees them held), so the key rows need no lock. Otherwise the transaction rolls back and
 * the slow path locks the key rows, reads which locks were lost and releases the rest. A retry
 * after a commit whose reply was lost finds the job row gone and reports the first outcome.
 */
export async function releaseLocks(exec: Executor, t: ResourcesTables, claim: Claim, succeeded: boolean, ttlMicros: number | null): Promise<Released> {
  const keys = sortedKeys(claim);
  let previous: Released | undefined;
  const finish = async (conn: SqlConnection, lost: KeyReason<LostReason>[]): Promise<Released> => {
    if (succeeded && lost.length === 0 && claim.outputs.length > 0) await markProduced(conn, t, claim.outputs, claim.job, ttlMicros);
    await conn.query(`DELETE FROM ${t.jobs} WHERE \`holder\` = ?`, [claim.holder]);
    previous = { lost, produced: succeeded && lost.length === 0 };
    return previous;
  };
  try {
    return await exec.transaction(async (conn) => {
      let deleted = 0;
      for (const part of runs(keys)) {
        const res = await conn.query(
          `DELETE FROM ${t.locks} WHERE \`holder\` = ? AND \`h\` IN (${placeholderList(part.length)}) AND \`lease_until\` > ${NOW}`,
          [claim.holder, ...part.map((k) => k.h)],
        );
        deleted += res.affectedRows;
      }
      if (deleted !== keys.length) throw new NotAllLive();
      return finish(conn, []);
    }, LOCKING);
  } catch (err) {
    if (!(err instanceof NotAllLive)) throw err;
  }
  return exec.transaction(async (conn) => {
    await lockKeyRows(conn, t, keys);
    const mine = await holderLocks(conn, t, claim.holder);
    if (previous && mine.length === 0) {
      const job = await conn.query(`SELECT 1 FROM ${t.jobs} WHERE \`holder\` = ?`, [claim.holder]);
      if (job.rows.length === 0) return previous;
    }
    if (mine.length > 0)
      await deleteLockRows(
        conn,
        t,
        mine.map((l) => ({ h: bin(l.id), holder: claim.holder })),
      );
    return finish(conn, lostLocks(claim, mine));
  }, LOCKING);
}

/** `canRun()`: the rules over the current state, read without locking or writing anything. */
export async function checkKeys(exec: Executor, t: ResourcesTables, claim: Pick<Claim, 'inputs' | 'outputs'>, overwrite: boolean): Promise<KeyReason[]> {
  const keys = sortedKeys(claim);
  const reader = { query: exec.query.bind(exec) } as SqlConnection;
  const present = new Set<string>();
  for (const part of runs(keys)) {
    const { rows } = await exec.query<{ h: Buffer }>(
      `SELECT \`h\` FROM ${t.keys} WHERE \`h\` IN (${placeholderList(part.length)}) AND ${PRESENT}`,
      part.map((k) => k.h),
    );
    for (const r of rows) present.add(Buffer.from(r.h).toString('binary'));
  }
  const locks = await readLocks(reader, t, keys);
  return blockedKeys(claim.inputs, claim.outputs, { present, locks }, undefined, overwrite);
}
