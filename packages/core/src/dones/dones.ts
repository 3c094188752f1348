import { chunks, statementBytes } from '../chunk.js';
import type { Executor } from '../engine/executor.js';
import { invalid, TaskrowError } from '../errors.js';
import { encodeKey, encodeKeys, INDEX_KEY_BYTES, VERBATIM_KEY_BYTES, type EncodedKey } from '../keys.js';
import { validateName } from '../names.js';
import { binaryList, binaryListedBytes, binaryLiteral, epochMicros } from '../sql.js';
import type { SqlConnection } from '../port.js';
import type { DonesTables } from './tables.js';
import { intArg, optionsOf, show, toNumber } from '../validate.js';
import { purgeGeneration, type BackgroundWork } from './purge.js';
import type { DonePage, Dones, PurgeMode } from './types.js';

/** Rows per INSERT / DELETE and digests per lookup. Far under 65,535 placeholders. */
const WRITE_ROWS = 2000;
const READ_ROWS = 2000;
/** Rounds of one mark chunk that met a moved generation before it gives up (see `markChecked`). */
const MARK_ROUNDS = 5;
/** Lookups of a `pending()` stream in flight at once (a pool runs them in parallel). */
const PENDING_IN_FLIGHT = 3;
const EPOCH_MICROS = epochMicros('`marked_at`');

const byIndex = (a: EncodedKey, b: EncodedKey): number => Buffer.compare(a.k, b.k);
/** Bytes a key's index form adds to an `IN (...)` list: its hex literal and a separator. */
const listedBytes = (k: EncodedKey): number => binaryListedBytes(k.k);
/** `listedBytes` of the longest index form: the room a lookup keeps for one more key. */
const MAX_LISTED_BYTES = INDEX_KEY_BYTES * 2 + 5;
/** Bytes a key adds to a mark's VALUES: both hex literals and the row around them. */
const rowBytes = (k: EncodedKey): number => k.k.length * 2 + (k.long ? k.bytes.length * 2 : 0) + 40;

/** Sorts `keys` in index order, in place; keys given in that order already (the usual case) are only checked. */
function inIndexOrder(keys: EncodedKey[]): void {
  for (let i = 1; i < keys.length; i++) {
    if (Buffer.compare(keys[i - 1]!.k, keys[i]!.k) > 0) {
      keys.sort(byIndex);
      return;
    }
  }
}

/**
 * The VALUES of a mark's INSERT, all in the text: the generation as a number (an integer the
 * server gave), each key's index form as a hex literal, and a long key's full bytes beside it.
 */
function markRows(gen: number, keys: readonly EncodedKey[]): string {
  if (!Number.isSafeInteger(gen)) throw new TaskrowError('DATABASE_ERROR', `a Dones generation must be an integer, got ${String(gen)}`);
  return keys.map((k) => `(${gen}, ${binaryLiteral(k.k)}, ${k.long ? binaryLiteral(k.bytes) : 'NULL'}, UTC_TIMESTAMP(6))`).join(', ');
}
/**
 * A Set member for a key, cheap to compute on both sides: a verbatim index form decodes to the
 * key itself (keys are well-formed Unicode); a long key's form is tagged so the two never meet.
 */
const LONG_TAG = '\u0000long:';
const tagOfRow = (k: Buffer): string => (k.length > VERBATIM_KEY_BYTES ? LONG_TAG + k.toString('latin1') : k.toString('utf8'));
const tagOf = (k: EncodedKey): string => (k.long ? LONG_TAG + k.k.toString('latin1') : k.key);

/** Creates the Dones of one namespace. */
export function createDones(exec: Executor, t: DonesTables, namespace: unknown, background: BackgroundWork): Dones {
  const ns = validateName('namespace', namespace);
  const bytes = statementBytes(exec.dialect.maxAllowedPacket);
  const currentGen = `(SELECT \`gen\` FROM ${t.ns} WHERE \`name\` = ?)`;

  /**
   * The namespace's generation, share-locked for this transaction so clear() cannot move it until
   * the write commits. The row always exists when this runs for a write (see ensureNamespace), so
   * the lock is a record lock, never a gap lock that concurrent creators would deadlock on.
   */
  async function lockGeneration(conn: SqlConnection): Promise<number | undefined> {
    const found = await conn.query<{ gen: unknown }>(`SELECT \`gen\` FROM ${t.ns} WHERE \`name\` = ? LOCK IN SHARE MODE`, [ns]);
    return found.rows[0] ? toNumber(found.rows[0].gen) : undefined;
  }

  /**
   * Creates the namespace row if it is missing, with autocommit statements and no locking read:
   * a thousand first writers race here without deadlocking. A loser's unused generation is
   * retired for the purge.
   */
  let exists = false;
  /** The generation the last checked mark confirmed: where the next one writes first. */
  let seenGen: number | undefined;
  async function ensureNamespace(): Promise<void> {
    if (exists) return;
    const have = await committedGeneration();
    if (have !== undefined) seenGen ??= have; // a first checked mark writes there (and checks it after)
    else {
      const gen = (await exec.query(`INSERT INTO ${t.gen} (\`ns\`) VALUES (?)`, [ns])).insertId;
      // IGNORE skips only the duplicate name (both values are the server's or validated). A loser
      // waits only for a shared lock on the winner's row, so losers do not queue behind each other.
      const made = await exec.query(`INSERT IGNORE INTO ${t.ns} (\`name\`, \`gen\`, \`created_at\`) VALUES (?, ?, UTC_TIMESTAMP(6))`, [ns, gen]);
      // A loser reads the row as committed now: another creator's generation, or a later clear()'s.
      const now = made.affectedRows === 1 ? gen : await committedGeneration();
      if (now !== gen) await exec.query(`UPDATE ${t.gen} SET \`retired_at\` = UTC_TIMESTAMP(6) WHERE \`gen\` = ?`, [gen]);
      if (now !== undefined) seenGen ??= now; // where the first checked mark writes (and checks it after)
    }
    exists = true;
  }

  /** The namespace's generation as last committed (a plain read), or undefined when the row is missing. */
  async function committedGeneration(): Promise<number | undefined> {
    const found = await exec.query<{ gen: unknown }>(`SELECT \`gen\` FROM ${t.ns} WHERE \`name\` = ?`, [ns]);
    return found.rows[0] ? toNumber(found.rows[0].gen) : undefined;
  }

  /** The INSERT of a mark of `part` into generation `gen`, through `conn` or autocommit; resolves to the keys added. */
  async function insertMarks(via: Pick<SqlConnection, 'query'>, gen: number, part: readonly EncodedKey[]): Promise<number> {
    // IGNORE skips only duplicates here: every value was validated (key bytes within the
    // columns), so nothing can be truncated or coerced.
    return (await via.query(`INSERT IGNORE INTO ${t.dones} (\`gen\`, \`k\`, \`k_long\`, \`marked_at\`) VALUES ${markRows(gen, part)}`)).affectedRows;
  }

  /**
   * Marks `part` in one transaction that share-locks the namespace row first, so a concurrent
   * clear() waits for it (inside the application's transaction, where a later read could not see
   * a clear commit).
   */
  async function markLocked(part: readonly EncodedKey[]): Promise<number> {
    const write = (): Promise<number | undefined> =>
      exec.transaction(async (conn) => {
        const gen = await lockGeneration(conn);
        return gen === undefined ? undefined : insertMarks(conn, gen, part);
      });
    let n = await write();
    if (n === undefined) {
      // The namespace row was rolled back (it was created inside a transaction that aborted).
      exists = false;
      await ensureNamespace();
      n = await write();
    }
    if (n === undefined) throw new TaskrowError('DATABASE_ERROR', `namespace ${JSON.stringify(ns)} could not be created`);
    return n;
  }

  /**
   * Marks `part` with one autocommit INSERT into the generation seen last, then reads the
   * generation again. Generations only move forward, to numbers never used before, so one read
   * unchanged after the INSERT was current while the INSERT ran: the marks are in place, and no
   * lock was held beyond the INSERT itself. When a clear() moved it meanwhile (or the namespace
   * row was rolled back), the INSERT may have gone to a retired generation: those rows are
   * deleted (the purge of that generation may be over) and the INSERT repeated into the current
   * one. MUST NOT return before a read of the generation confirmed the one written to.
   */
  async function markChecked(part: readonly EncodedKey[]): Promise<number> {
    let gen = seenGen ?? (await committedGeneration());
    for (let round = 0; round < MARK_ROUNDS; round++) {
      if (gen === undefined) {
        exists = false;
        await ensureNamespace();
        gen = await committedGeneration();
        if (gen === undefined) break;
      }
      const added = await insertMarks(exec, gen, part);
      const now = await committedGeneration();
      if (now === gen) {
        seenGen = gen;
        return added;
      }
      await exec.query(`DELETE FROM ${t.dones} WHERE \`gen\` = ? AND \`k\` IN (${binaryList(part.map((k) => k.k))})`, [gen]);
      gen = now;
    }
    throw new TaskrowError('DATABASE_ERROR', `namespace ${JSON.stringify(ns)} moved to a new generation ${MARK_ROUNDS} times during one mark (clear() in a loop?), or could not be created`);
  }

  /** Index forms among `keys` that are done (as `tag`s), with one query. */
  async function doneTags(keys: readonly EncodedKey[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const { rows } = await exec.query<{ k: Buffer }>(
      `SELECT \`k\` FROM ${t.dones} WHERE \`gen\` = ${currentGen} AND \`k\` IN (${binaryList(keys.map((k) => k.k))})`,
      [ns],
    );
    return new Set(rows.map((r) => tagOfRow(r.k)));
  }

  async function doneAmong(keys: readonly EncodedKey[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const part of chunks(keys, { maxRows: READ_ROWS, maxBytes: bytes }, listedBytes)) {
      for (const h of await doneTags(part)) found.add(h);
    }
    return found;
  }

  const dones: Dones = {
    namespace: ns,

    async mark(keys) {
      const list = encodeKeys(keys);
      let added = 0;
      for (const part of chunks(list, { maxRows: WRITE_ROWS, maxBytes: bytes }, rowBytes)) {
        inIndexOrder(part); // one lock order for every writer: overlapping batches wait, not deadlock
        await ensureNamespace();
        added += exec.client.joined ? await markLocked(part) : await markChecked(part);
      }
      return added;
    },

    async unmark(keys) {
      const list = encodeKeys(keys);
      let removed = 0;
      for (const part of chunks(list, { maxRows: WRITE_ROWS, maxBytes: bytes }, listedBytes)) {
        inIndexOrder(part);
        removed += await exec.transaction(async (conn) => {
          const gen = await lockGeneration(conn);
          if (gen === undefined) return 0;
          const res = await conn.query(
            `DELETE FROM ${t.dones} WHERE \`gen\` = ? AND \`k\` IN (${binaryList(part.map((k) => k.k))})`,
            [gen],
          );
          return res.affectedRows;
        });
      }
      return removed;
    },

    async isDone(key) {
      const k = encodeKey(key);
      return (await doneTags([k])).size > 0;
    },

    async areDone(keys) {
      const list = encodeKeys(keys);
      const found = await doneAmong(list);
      return list.filter((k) => found.has(tagOf(k))).map((k) => k.key);
    },

    async allDone(keys) {
      const list = encodeKeys(keys);
      const found = await doneAmong(list);
      return list.every((k) => found.has(tagOf(k)));
    },

    async anyDone(keys) {
      const list = encodeKeys(keys);
      return (await doneAmong(list)).size > 0;
    },

    async *pending(candidates, options = {}) {
      optionsOf('pending()', options, ['chunkSize']);
      const size = intArg('pending() chunkSize', options.chunkSize ?? READ_ROWS, 1, 10_000);
      const inFlight: { keys: EncodedKey[]; done: Promise<Set<string>> }[] = [];
      let batch: EncodedKey[] = [];
      let batchBytes = 0;
      let index = 0;
      const launch = (): void => {
        const keys = batch;
        batch = [];
        batchBytes = 0;
        const done = doneTags(keys);
        done.catch(() => undefined); // observed when drained; avoids an unhandled rejection meanwhile
        inFlight.push({ keys, done });
      };
      for await (const candidate of candidates as AsyncIterable<string>) {
        const key = encodeKey(candidate, `candidate #${index++}`);
        batch.push(key);
        batchBytes += listedBytes(key);
        // A lookup holds chunkSize keys, fewer when the longest key's hex might not fit beside them.
        if (batch.length < size && batchBytes + MAX_LISTED_BYTES <= bytes) continue;
        launch();
        while (inFlight.length >= PENDING_IN_FLIGHT) yield* drain(inFlight.shift()!);
      }
      if (batch.length > 0) launch();
      while (inFlight.length > 0) yield* drain(inFlight.shift()!);
    },

    async count() {
      const { rows } = await exec.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${t.dones} WHERE \`gen\` = ${currentGen}`, [ns]);
      return toNumber(rows[0]?.n);
    },

    async markedAt(key) {
      const k = encodeKey(key);
      const { rows } = await exec.query<{ us: unknown }>(
        `SELECT ${EPOCH_MICROS} AS us FROM ${t.dones} WHERE \`gen\` = ${currentGen} AND \`k\` = ?`,
        [ns, k.k],
      );
      return rows[0] ? new Date(toNumber(rows[0].us) / 1000) : null;
    },

    async list(options = {}): Promise<DonePage> {
      optionsOf('list()', options, ['limit', 'after']);
      const limit = intArg('list() limit', options.limit ?? 1000, 1, 10_000);
      const after = options.after === undefined ? undefined : cursor(options.after);
      const { rows } = await exec.query<{ k: Buffer; k_long: Buffer | null; us: unknown }>(
        `SELECT \`k\`, \`k_long\`, ${EPOCH_MICROS} AS us FROM ${t.dones}
         WHERE \`gen\` = ${currentGen}${after ? ' AND `k` > ?' : ''} ORDER BY \`k\` LIMIT ${limit + 1}`,
        after ? [ns, after] : [ns],
      );
      const page = rows.slice(0, limit);
      return {
        entries: page.map((r) => ({ key: (r.k_long ?? r.k).toString('utf8'), markedAt: new Date(toNumber(r.us) / 1000) })),
        next: rows.length > limit ? page[page.length - 1]!.k.toString('base64url') : undefined,
      };
    },

    async clear(options = {}) {
      optionsOf('clear()', options, ['purge']);
      const mode: PurgeMode = options.purge ?? 'background';
      if (!['background', 'wait', 'none'].includes(mode)) throw invalid(`clear() purge must be "background", "wait" or "none", got ${show(mode)}`);
      const retired = await exec.transaction(async (conn) => {
        const sel = await conn.query<{ gen: unknown }>(`SELECT \`gen\` FROM ${t.ns} WHERE \`name\` = ? FOR UPDATE`, [ns]);
        if (!sel.rows[0]) return undefined;
        const old = toNumber(sel.rows[0].gen);
        const fresh = (await conn.query(`INSERT INTO ${t.gen} (\`ns\`) VALUES (?)`, [ns])).insertId;
        await conn.query(`UPDATE ${t.gen} SET \`retired_at\` = UTC_TIMESTAMP(6) WHERE \`gen\` = ?`, [old]);
        await conn.query(`UPDATE ${t.ns} SET \`gen\` = ? WHERE \`name\` = ?`, [fresh, ns]);
        return old;
      });
      if (retired === undefined || mode === 'none' || exec.client.joined) return;
      if (mode === 'wait') await purgeGeneration(exec, t, retired);
      else background.start(() => purgeGeneration(exec, t, retired));
    },
  };
  return dones;

  async function* drain(entry: { keys: EncodedKey[]; done: Promise<Set<string>> }): AsyncGenerator<string> {
    const found = await entry.done;
    for (const k of entry.keys) if (!found.has(tagOf(k))) yield k.key;
  }
}

function cursor(after: unknown): Buffer {
  const bytes = typeof after === 'string' && /^[A-Za-z0-9_-]+$/.test(after) ? Buffer.from(after, 'base64url') : undefined;
  if (!bytes || bytes.length === 0 || bytes.length > INDEX_KEY_BYTES) throw invalid(`list() after must be a cursor returned as next, got ${String(after).slice(0, 40)}`);
  return bytes;
}
