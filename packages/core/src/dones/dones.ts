import { chunks, statementBytes } from '../chunk.js';
import type { Executor } from '../engine/executor.js';
import { invalid, TaskrowError } from '../errors.js';
import { encodeKey, encodeKeys, INDEX_KEY_BYTES, VERBATIM_KEY_BYTES, type EncodedKey } from '../keys.js';
import { validateName } from '../names.js';
import { valuesTable } from '../dialect.js';
import { binaryList, binaryListedBytes, binaryListedLength, binaryLiteral, epochMicros } from '../sql.js';
import type { SqlConnection } from '../port.js';
import type { DonesTables } from './tables.js';
import { intArg, optionsOf, show, toNumber } from '../validate.js';
import { purgeGeneration, type BackgroundWork } from './purge.js';
import type { DonePage, Dones, PurgeMode } from './types.js';

/** Rows per INSERT / DELETE and digests per lookup. Far under 65,535 placeholders. */
const WRITE_ROWS = 2000;
const READ_ROWS = 2000;
/** Lookups of a `pending()` stream in flight at once (a pool runs them in parallel). */
const PENDING_IN_FLIGHT = 3;
const EPOCH_MICROS = epochMicros('`marked_at`');

const byIndex = (a: EncodedKey, b: EncodedKey): number => Buffer.compare(a.k, b.k);
/** Bytes a key's index form adds to an `IN (...)` list: its hex literal and a separator. */
const listedBytes = (k: EncodedKey): number => binaryListedBytes(k.k);
/** `listedBytes` of the longest index form: the room a lookup keeps for one more key. */
const MAX_LISTED_BYTES = binaryListedLength(INDEX_KEY_BYTES);
/** Bytes a key adds to a mark's table value constructor: both hex literals and the row around them. */
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
 * The rows of a mark's table value constructor, all in the text: each key's index form as a hex
 * literal, and a long key's full bytes beside it.
 */
const markRows = (keys: readonly EncodedKey[]): string[] => keys.map((k) => `(${binaryLiteral(k.k)}, ${k.long ? binaryLiteral(k.bytes) : 'NULL'})`);

/**
 * A Set member for a key, cheap to compute on both sides: a verbatim index form decodes to the
 * key itself (keys are well-formed Unicode); a long key's form is tagged so the two never meet.
 */
const LONG_TAG = '\u0000long:';
const tagOfRow = (k: Buffer): string => (k.length > VERBATIM_KEY_BYTES ? LONG_TAG + k.toString('latin1') : k.toString('utf8'));
const tagOf = (k: EncodedKey): string => (k.long ? LONG_TAG + k.k.toString('latin1') : k.key);

/**
 * Names of the namespaces whose row the handles of one taskrow (one `tr`, or one `tr.in(tx)`) have
 * seen or made: their marks go straight to the INSERT. Rows are never deleted; one made in a
 * transaction that rolled back is made again when a mark finds it missing.
 */
export type KnownNamespaces = Set<string>;
/** Names a `KnownNamespaces` holds before it starts over. */
const KNOWN_NAMESPACES = 10_000;

/** Creates the Dones of one namespace. */
export function createDones(exec: Executor, t: DonesTables, namespace: unknown, background: BackgroundWork, known: KnownNamespaces): Dones {
  const ns = validateName('namespace', namespace);
  const bytes = statementBytes(exec.dialect.maxAllowedPacket);
  const currentGen = `(SELECT \`gen\` FROM ${t.ns} WHERE \`name\` = ?)`;

  /**
   * The namespace's generation, share-locked for this transaction so clear() cannot move it until
   * the write commits; undefined when the row is missing (nothing to unmark then).
   */
  async function lockGeneration(conn: SqlConnection): Promise<number | undefined> {
    const found = await conn.query<{ gen: unknown }>(`SELECT \`gen\` FROM ${t.ns} WHERE \`name\` = ? LOCK IN SHARE MODE`, [ns]);
    return found.rows[0] ? toNumber(found.rows[0].gen) : undefined;
  }

  /**
   * Creates the namespace row with statements that take no locking read (autocommit ones, or the
   * application's transaction's when joined), so a thousand first writers race here without
   * deadlocking: a new generation, then the row naming it unless another creator's row is there
   * first. IGNORE skips only the duplicate name (both values are the server's or validated); a
   * loser waits only for a shared lock on the winner's row, so losers do not queue behind each
   * other, and retires its unused generation for the purge. A loser reads the row first: an
   * INSERT retried after its reply was lost meets its own committed row as a duplicate, and MUST
   * NOT retire the generation that row names.
   */
  async function createNamespace(): Promise<void> {
    const gen = (await exec.query(`INSERT INTO ${t.gen} (\`ns\`) VALUES (?)`, [ns])).insertId;
    const made = await exec.query(`INSERT IGNORE INTO ${t.ns} (\`name\`, \`gen\`, \`created_at\`) VALUES (?, ?, UTC_TIMESTAMP(6))`, [ns, gen]);
    if (made.affectedRows === 1) return;
    const found = await exec.query<{ gen: unknown }>(`SELECT \`gen\` FROM ${t.ns} WHERE \`name\` = ?`, [ns]);
    if (!found.rows[0] || toNumber(found.rows[0].gen) !== gen)
      await exec.query(`UPDATE ${t.gen} SET \`retired_at\` = UTC_TIMESTAMP(6) WHERE \`gen\` = ?`, [gen]);
  }

  /**
   * Makes sure the namespace row exists before a mark's locking read looks for it, unless a handle
   * of this taskrow saw it already: a plain read, and the row created when it is missing. A locking
   * read of a missing row takes a gap lock; a creator's insert of the row waits for every such
   * lock, and new ones keep being granted while marks arrive (gap locks never wait), so the row
   * took up to 0.7 s to appear under 200 first marks arriving over 200 ms, and most of them created
   * it too (measured 2026-11-30, 8 to 39 creators against 3 to 5 with this read). Inside the
   * application's transaction such a gap lock would last until it ends, where two transactions
   * creating namespaces deadlock on each other's.
   */
  async function ensureNamespace(): Promise<void> {
    if (known.has(ns)) return;
    const found = await exec.query(`SELECT 1 FROM ${t.ns} WHERE \`name\` = ?`, [ns]);
    if (found.rows.length === 0) await createNamespace();
    if (known.size >= KNOWN_NAMESPACES) known.clear();
    known.add(ns);
  }

  /**
   * Marks `part` with one statement: it reads the namespace's generation with a share lock (a
   * locking read: the latest committed row, at any isolation level) and inserts every key into it,
   * so a clear() waits for the statement's transaction to commit, or the statement waits for the
   * clear and writes to the new generation; no mark lands in a retired generation. IGNORE skips
   * only duplicates (every value was validated: key bytes within the columns). Its insert id is the
   * generation written to (`LAST_INSERT_ID(expr)` in an INSERT ... SELECT), 0 when the namespace row
   * is missing and nothing was written. Resolves to the keys added, or undefined for a missing row.
   */
  async function insertMarks(part: readonly EncodedKey[]): Promise<number | undefined> {
    const res = await exec.query(
      `INSERT IGNORE INTO ${t.dones} (\`gen\`, \`k\`, \`k_long\`, \`marked_at\`)
       WITH \`v\` (\`k\`, \`k_long\`) AS (${valuesTable(exec.dialect, markRows(part))})
       SELECT LAST_INSERT_ID(n.\`gen\`), v.\`k\`, v.\`k_long\`, UTC_TIMESTAMP(6) FROM ${t.ns} n JOIN \`v\` WHERE n.\`name\` = ? LOCK IN SHARE MODE`,
      [ns],
    );
    return res.insertId === 0 ? undefined : res.affectedRows;
  }

  /** Marks `part`, creating the namespace when its row is missing (never made, or made in a transaction that rolled back). */
  async function markPart(part: readonly EncodedKey[]): Promise<number> {
    await ensureNamespace();
    let added = await insertMarks(part);
    if (added === undefined) {
      await createNamespace();
      added = await insertMarks(part);
    }
    if (added === undefined) throw new TaskrowError('DATABASE_ERROR', `namespace ${JSON.stringify(ns)} could not be created`);
    return added;
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
        added += await markPart(part);
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
          const res = await conn.query(`DELETE FROM ${t.dones} WHERE \`gen\` = ? AND \`k\` IN (${binaryList(part.map((k) => k.k))})`, [gen]);
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
      const { rows } = await exec.query<{ us: unknown }>(`SELECT ${EPOCH_MICROS} AS us FROM ${t.dones} WHERE \`gen\` = ${currentGen} AND \`k\` = ?`, [ns, k.k]);
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
  if (!bytes || bytes.length === 0 || bytes.length > INDEX_KEY_BYTES)
    throw invalid(`list() after must be a cursor returned as next, got ${String(after).slice(0, 40)}`);
  return bytes;
}
