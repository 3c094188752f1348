import { chunks, placeholderList } from '../../chunk.js';
import { invalid } from '../../errors.js';
import { FROM_MICROS } from '../../sql.js';
import { intArg, show, toNumber } from '../../validate.js';
import { deadKeysOf, dropDeadKeys } from '../model/dead-keys.js';
import { announce } from '../wake/ring.js';
import { takeKeys } from '../enqueue/dedup.js';
import { deleteById, epochMicros, PHASE, updateById } from '../model/tables.js';
import type { AckContext } from '../settle/context.js';

/** Rows per maintenance statement: short transactions, primary-key writes only. */
const STEP = 1000;

function idsArg(what: string, ids: unknown): number[] {
  if (!Array.isArray(ids)) throw invalid(`${what} ids must be an array of job ids, got ${show(ids)}`);
  return ids.map((id) => intArg(`${what} id`, id, 1));
}

/** Where a sweep stops: rows due at least `olderThanUs` ago (0: due now), and not past the row `upTo` in the index's order. */
export interface SweepRange {
  readonly olderThanUs?: number;
  readonly upTo?: IndexPosition;
}

/** A row's place in the `claim` index within one queue and phase: due time (epoch microseconds), group, id. */
export interface IndexPosition {
  readonly dueUs: number;
  readonly grp: string;
  readonly id: number;
}

/**
 * Runs `write(ids)` over the ids of the queue's `phase` rows within `range`, read with a plain
 * SELECT of the `claim` index range in its order (due time, group, id), STEP at a time from where
 * the last step ended, until none is left or `limit` rows were written. Each write is by primary
 * key and re-checks the phase, so rows that moved meanwhile are left alone, and rows a write leaves
 * in place are not read again.
 */
export async function sweep(c: AckContext, phase: number, range: SweepRange, limit: number, write: (ids: number[]) => Promise<number>): Promise<number> {
  let total = 0;
  let after: IndexPosition | undefined;
  const bounds: string[] = [];
  const boundParams: (string | number)[] = [];
  if (range.olderThanUs !== undefined) {
    bounds.push(`\`due_at\` <= UTC_TIMESTAMP(6) - INTERVAL ${Math.max(0, Math.round(range.olderThanUs))} MICROSECOND`);
  }
  if (range.upTo !== undefined) {
    bounds.push(`(\`due_at\`, \`grp\`, \`id\`) <= (${FROM_MICROS}, ?, ?)`);
    boundParams.push(range.upTo.dueUs, range.upTo.grp, range.upTo.id);
  }
  while (total < limit) {
    const { rows } = await c.exec.query<{ id: unknown; grp: string; due_us: unknown }>(
      `SELECT \`id\`, \`grp\`, ${epochMicros('`due_at`')} AS due_us FROM ${c.t.jobs} FORCE INDEX (\`claim\`)
       WHERE \`queue\` = ? AND \`phase\` = ${phase} AND \`ready_priority\` = 0${bounds.map((b) => ` AND ${b}`).join('')}` +
        `${after ? ` AND (\`due_at\`, \`grp\`, \`id\`) > (${FROM_MICROS}, ?, ?)` : ''}
       ORDER BY \`due_at\`, \`grp\`, \`id\` LIMIT ${Math.min(STEP, limit - total)}`,
      [c.queue, ...boundParams, ...(after ? [after.dueUs, after.grp, after.id] : [])],
    );
    if (rows.length === 0) break;
    total += await write(rows.map((r) => toNumber(r.id)));
    const last = rows[rows.length - 1]!;
    after = { dueUs: toNumber(last.due_us), grp: last.grp, id: toNumber(last.id) };
  }
  return total;
}

/**
 * Re-drives the dead jobs `ids` in one transaction: jobs without a kept dedup key become ready;
 * a job with one gets its key back and becomes ready only when no live job of the queue holds
 * that key (`takeKeys`, which also keeps two dead jobs of one key from both coming back): it
 * stays dead and is not counted. Resolves to the number re-driven.
 */
function redrive(c: AckContext, ids: number[]): Promise<number> {
  // A job with a concurrency key comes back due, for a claim to admit (see `limits.ts`).
  const ready = `\`attempt\` = 0, \`run_at\` = UTC_TIMESTAMP(6), \`due_at\` = UTC_TIMESTAMP(6),
    \`ready_priority\` = IF(\`conc_key\` IS NULL, \`priority\`, 0), \`phase\` = IF(\`conc_key\` IS NULL, ${PHASE.ready}, ${PHASE.delayed})`;
  const dead = `\`queue\` = ? AND \`phase\` = ${PHASE.dead}`;
  return c.exec.transaction(
    async (conn) => {
      const keys = await deadKeysOf(conn, c.t, ids);
      const plain = ids.filter((id) => !keys.has(id));
      let n = 0;
      if (plain.length > 0) {
        n += (await conn.query(`${updateById(c.t.jobs)} SET ${ready} WHERE \`id\` IN (${placeholderList(plain.length)}) AND ${dead}`, [...plain, c.queue]))
          .affectedRows;
      }
      if (keys.size === 0) return n;
      const holders = await takeKeys(
        conn,
        c.t,
        c.queue,
        [...keys].map(([id, key]) => ({ key, id })),
      );
      const keyed = [...keys].filter(([id, key]) => holders.get(key.toString('hex')) === id).map(([id]) => id);
      if (keyed.length === 0) return n;
      await conn.query(
        `${updateById(c.t.jobs)} SET \`dedup_k\` = CASE \`id\`${' WHEN ? THEN ?'.repeat(keyed.length)} END, ${ready}
       WHERE \`id\` IN (${placeholderList(keyed.length)}) AND ${dead}`,
        [...keyed.flatMap((id) => [id, keys.get(id)!]), ...keyed, c.queue],
      );
      const back = await conn.query<{ id: unknown }>(
        `SELECT \`id\` FROM ${c.t.jobs} FORCE INDEX (PRIMARY) WHERE \`id\` IN (${placeholderList(keyed.length)}) AND \`phase\` IN (${PHASE.ready}, ${PHASE.delayed}) AND \`dedup_k\` IS NOT NULL`,
        keyed,
      );
      await dropDeadKeys(
        conn,
        c.t,
        back.rows.map((r) => toNumber(r.id)),
      );
      return n + back.rows.length;
    },
    { isolation: 'READ COMMITTED' },
  );
}

/**
 * Makes dead jobs ready again with attempts reset, and their dedup keys back, then wakes idle
 * workers of the queue in this process (see `announce`). MUST NOT make two live jobs share a
 * dedup key: a dead job whose key a live job holds stays dead and is not counted.
 */
export async function retryDeadJobs(c: AckContext, options: { ids?: readonly number[]; limit?: number } = {}): Promise<number> {
  const limit = intArg('retryDead() limit', options.limit ?? Number.MAX_SAFE_INTEGER, 0);
  const write = (ids: number[]): Promise<number> => redrive(c, ids);
  const n = options.ids !== undefined ? await inSteps(idsArg('retryDead()', options.ids), write) : await sweep(c, PHASE.dead, {}, limit, write);
  announce(c.exec, c.t, c.queue, n);
  return n;
}

/** Runs `write` over `ids`, STEP at a time; resolves to the sum. */
async function inSteps(ids: number[], write: (ids: number[]) => Promise<number>): Promise<number> {
  let n = 0;
  for (const part of chunks(ids, { maxRows: STEP, maxBytes: Number.MAX_SAFE_INTEGER }, () => 0)) n += await write(part);
  return n;
}

/** Deletes the dead jobs of `ids` (still dead, of this queue) in one transaction, their kept dedup keys with them. */
export function deleteDead(c: AckContext): (ids: number[]) => Promise<number> {
  return (ids) =>
    c.exec.transaction(async (conn) => {
      const n = (
        await conn.query(`${deleteById(c.t.jobs)} WHERE \`id\` IN (${placeholderList(ids.length)}) AND \`queue\` = ? AND \`phase\` = ${PHASE.dead}`, [
          ...ids,
          c.queue,
        ])
      ).affectedRows;
      await dropDeadKeys(conn, c.t, ids);
      return n;
    });
}

/** Deletes dead jobs: the given ids, or all of the queue. */
export async function purgeDeadJobs(c: AckContext, options: { ids?: readonly number[] } = {}): Promise<number> {
  if (options.ids === undefined) return sweep(c, PHASE.dead, {}, Number.MAX_SAFE_INTEGER, deleteDead(c));
  return inSteps(idsArg('purgeDead()', options.ids), deleteDead(c));
}
