import { chunks, statementBytes } from '../chunk.js';
import type { Executor } from '../engine/executor.js';
import { invalid, TaskrowError } from '../errors.js';
import type { SqlConnection, SqlValue } from '../port.js';
import { purgeReceiptsNow, readReceipt, receiptToken, writeReceipt } from '../receipts/receipts.js';
import { receiptsTable } from '../receipts/tables.js';
import { optionsOf, show, toNumber } from '../validate.js';
import { encodeBatch, idBatch, idCodec, parseIdType, type EncodedId, type IdCodec } from './ids.js';
import { addOptions, autoAddOptions, bumpOptions, dryRunOptions, getArgs } from './options.js';
import { createLoopTable, resolveIdType } from './registry.js';
import { takeDue } from './claim.js';
import { gateSql, LoopGate, processTurnsOf, type EndTurn } from './gate.js';
import { loopSql, type LoopSql } from './sql.js';
import { loopTable } from './tables.js';
import type { Loop, LoopCheck, LoopId, LoopIdType, LoopStats } from './types.js';

/** Seconds the database reported (or null) as milliseconds. */
const msOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : toNumber(v) * 1000);

/** Ids per statement (and per transaction outside `taskrow.in(tx)`). */
const IDS_PER_STATEMENT = 1000;

interface Resolved {
  readonly codec: IdCodec;
  readonly sql: LoopSql;
}

interface StatsRow {
  min_id: unknown;
  max_id: unknown;
  min_update_time: unknown;
  max_update_time: unknown;
  locked: unknown;
  min_lock_time: unknown;
  max_lock_time: unknown;
  bumped: unknown;
  min_bump_time: unknown;
  max_bump_time: unknown;
}

/** A receipt's text for the ids a `get` took: base64 of a JSON array of their text forms (ASCII). */
const encodeIds = (ids: readonly LoopId[]): string => Buffer.from(JSON.stringify(ids.map(String)), 'utf8').toString('base64');
const decodeIds = (codec: IdCodec, text: string): LoopId[] =>
  (JSON.parse(Buffer.from(text, 'base64').toString('utf8')) as string[]).map((s) => codec.decode(s));

/** The `turns` option: `'auto'` (default), true or false. MUST throw before any SQL on anything else. */
function turnsArg(value: unknown): boolean | 'auto' {
  if (value === undefined) return 'auto';
  if (value === 'auto') return value;
  if (typeof value !== 'boolean') throw invalid(`loop() option turns must be true, false or 'auto', got ${show(value)}`);
  return value;
}

/**
 * The loop `name` over `exec`. Validates the name at once (`INVALID_NAME`); the id type is read
 * from the registry on first use (or `known` when the caller just created the loop), and an
 * operation on a loop that does not exist rejects with `NOT_FOUND`.
 */
export function openLoop(exec: Executor, prefix: string, name: unknown, options: unknown, known?: LoopIdType): Loop {
  const t = loopTable(prefix, name);
  const handle = optionsOf('loop()', options, ['idType', 'turns']);
  const declaredRaw = handle['idType'];
  const turns = turnsArg(handle['turns']);
  const gate = turns === true ? new LoopGate(exec.client, gateSql(exec.dialect, prefix), t) : undefined;
  const local = turns === false ? undefined : processTurnsOf(exec.state, exec.dialect, prefix, t, turns === 'auto');
  const declared = declaredRaw === undefined ? undefined : parseIdType(declaredRaw);
  const early = declared ? idCodec(declared) : undefined;
  const bytes = statementBytes(exec.dialect.maxAllowedPacket);
  const receipts = receiptsTable(prefix);
  const bind = (type: LoopIdType): Resolved => {
    const codec = idCodec(type);
    return { codec, sql: loopSql(t, codec) };
  };
  let resolved: Promise<Resolved> | undefined = known ? Promise.resolve(bind(known)) : undefined;

  /**
   * Runs `take` in a transaction (retried as the engine retries) that also writes a receipt of the
   * ids taken: an attempt retried after a lost reply returns them instead of taking more.
   */
  async function takeWithReceipt(
    take: (conn: SqlConnection) => Promise<LoopId[]>,
    r: Resolved,
    run: { readonly isolation: 'READ COMMITTED' },
  ): Promise<LoopId[]> {
    const token = receiptToken();
    const ids = await guard(() =>
      exec.attempts(
        (attempt) => async (conn) => {
          const before = attempt.afterLost ? await readReceipt(conn, receipts, token) : undefined;
          if (before !== undefined) return decodeIds(r.codec, before);
          const taken = await take(conn);
          await writeReceipt(conn, receipts, token, encodeIds(taken));
          return taken;
        },
        run,
      ),
    );
    purgeReceiptsNow(exec, receipts);
    return ids;
  }

  function resolve(): Promise<Resolved> {
    resolved ??= resolveIdType(exec, prefix, t, declared).then(
      (type) => bind(type),
      (err: unknown) => {
        resolved = undefined;
        throw err;
      },
    );
    return resolved;
  }

  /** A loop that is registered but whose table was dropped by hand: say so, instead of "run migrate()". */
  async function guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof TaskrowError && err.code === 'SCHEMA_MISSING') {
        throw new TaskrowError('NOT_FOUND', `loop ${JSON.stringify(t.loop)} is registered but its table ${t.name} is missing: run taskrow.createLoop() again`, {
          cause: err,
          errno: err.errno,
        });
      }
      throw err;
    }
  }

  /**
   * Validates the ids (against the declared type before any statement, else after reading the
   * registry), and runs `work` on them in parts of at most IDS_PER_STATEMENT ids, summing the
   * results. An empty batch resolves to 0 without a statement.
   */
  async function eachPart(ids: unknown, work: (r: Resolved, part: EncodedId[], params: SqlValue[]) => Promise<number>): Promise<number> {
    const batch = idBatch(ids);
    if (early) encodeBatch(early, batch);
    if (batch.items.length === 0) return 0;
    const r = await resolve();
    const list = encodeBatch(r.codec, batch);
    return guard(async () => {
      let total = 0;
      for (const part of chunks(list, { maxRows: IDS_PER_STATEMENT, maxBytes: bytes }, (e) => e.size)) {
        total += await work(
          r,
          part,
          part.map((e) => e.param),
        );
      }
      return total;
    });
  }

  /**
   * One unit of writes. `autocommit`: each of its statements is correct on its own and runs (and is
   * retried) alone; otherwise, and for every dry run, one READ COMMITTED transaction.
   */
  function write(dryRun: boolean, autocommit: boolean, work: (conn: SqlConnection) => Promise<number>): Promise<number> {
    if (autocommit && !dryRun) return work({ query: (sql, params) => exec.query(sql, params) });
    return exec.transaction(work, { dryRun, isolation: 'READ COMMITTED' });
  }

  /**
   * `did` and `unlock`: an update of the ids found; with `autoAdd`, when some were missing, an
   * upsert of the part adds them (every distinct id then counts). Each statement is correct on its
   * own, so outside a dry run they run in autocommit: the common case (every id present) is one
   * primary-key update per part.
   */
  function settle(
    ids: unknown,
    o: { dryRun: boolean; autoAdd: boolean },
    pick: (sql: LoopSql) => [(n: number) => string, (n: number) => string],
  ): Promise<number> {
    return eachPart(ids, (r, part, params) =>
      write(o.dryRun, true, async (conn) => {
        const [upsert, update] = pick(r.sql);
        const found = (await conn.query(update(part.length), params)).affectedRows;
        if (!o.autoAdd || found >= part.length) return found;
        await conn.query(upsert(part.length), params);
        return part.length;
      }),
    );
  }

  const loop: Loop = {
    name: t.loop,
    table: t.name,

    async idType() {
      return (await resolve()).codec.type;
    },

    async add(ids, options) {
      const o = addOptions(options);
      return eachPart(ids, (r, part, params) =>
        write(o.dryRun, true, async (conn) => (await conn.query(r.sql.add(part.length, o.updated), params)).affectedRows),
      );
    },

    async remove(ids, options) {
      const o = dryRunOptions('remove()', options);
      return eachPart(ids, (r, part, params) => write(o.dryRun, true, async (conn) => (await conn.query(r.sql.remove(part.length), params)).affectedRows));
    },

    async get(limit, options) {
      const o = getArgs(limit, options);
      if (o.limit === 0) return [];
      const r = await resolve();
      // Inside the application's transaction a plain read may see an older snapshot than the
      // locking read: there, and where locking reads pass purge-pending entries cheaply (MySQL),
      // the locking read starts at the start of each step's range.
      const plainFirst = !exec.client.joined && exec.dialect.plainReadFirst;
      const take = async (conn: SqlConnection): Promise<LoopId[]> => {
        // Inside the application's transaction the gate would be held until the application commits.
        if (gate && !exec.client.joined) await gate.pass(conn);
        const ids = await takeDue(conn, r, o.limit, o.minLoopTime, plainFirst);
        const encoded = ids.map((id) => r.codec.encode(id, 'id'));
        for (const part of chunks(encoded, { maxRows: IDS_PER_STATEMENT, maxBytes: bytes }, (e) => e.size)) {
          await conn.query(r.sql.lock(part.length), [o.lockFor, ...part.map((e) => e.param)]);
        }
        return ids;
      };
      const run = { dryRun: o.dryRun, isolation: 'READ COMMITTED' } as const;
      if (exec.client.joined) return guard(() => exec.transaction(take, run));
      // The process's turn first (see ProcessTurns), held until the get() has committed.
      const end: EndTurn | undefined = await local?.take();
      // Only a get() that took ids measures the server's pace: a failed or empty one is quick for other reasons.
      let measured = false;
      try {
        const ids = o.dryRun ? await guard(() => exec.transaction(take, run)) : await takeWithReceipt(take, r, run);
        measured = ids.length > 0;
        return ids;
      } finally {
        end?.(measured);
      }
    },

    async did(ids, options) {
      return settle(ids, autoAddOptions('did()', options), (sql) => [sql.didUpsert, sql.did]);
    },

    async unlock(ids, options) {
      return settle(ids, autoAddOptions('unlock()', options), (sql) => [sql.unlockUpsert, sql.unlock]);
    },

    async bump(ids, options) {
      const o = bumpOptions(options);
      return eachPart(ids, (r, part, params) =>
        write(o.dryRun, !o.autoAdd, async (conn) => {
          if (o.autoAdd) await conn.query(r.sql.ensure(part.length), params);
          return (await conn.query(r.sql.bump(part.length), [o.lockFor, o.lockFor, ...params])).affectedRows;
        }),
      );
    },

    async check(ids) {
      const out = new Map<LoopId, LoopCheck>();
      await eachPart(ids, async (r, part, params) => {
        const { rows } = await exec.query<{ v: unknown; since_updated: unknown; locked_for: unknown }>(r.sql.check(part.length), params);
        for (const row of rows) {
          out.set(r.codec.decode(row.v), { sinceUpdated: msOrNull(row.since_updated), lockedFor: msOrNull(row.locked_for) });
        }
        return rows.length;
      });
      return out;
    },

    async stats() {
      const r = await resolve();
      const { rows } = await guard(() => exec.query<StatsRow>(r.sql.stats()));
      const s = rows[0];
      if (!s) throw new TaskrowError('DATABASE_ERROR', `stats() of loop ${JSON.stringify(t.loop)} returned no row`);
      const n = (v: unknown): number => (v === null || v === undefined ? 0 : toNumber(v));
      const ms = (v: unknown): number => n(v) * 1000;
      const id = (v: unknown): LoopId | null => (v === null || v === undefined ? null : r.codec.decode(v));
      const stats: LoopStats = {
        bumped: n(s.bumped),
        locked: n(s.locked),
        minBumpTime: ms(s.min_bump_time),
        maxBumpTime: ms(s.max_bump_time),
        minId: id(s.min_id),
        maxId: id(s.max_id),
        minLockTime: ms(s.min_lock_time),
        maxLockTime: ms(s.max_lock_time),
        minUpdateTime: ms(s.min_update_time),
        maxUpdateTime: ms(s.max_update_time),
      };
      return stats;
    },
  };
  return loop;
}

/** Creates (or finds) a loop and returns it; see `createLoopTable`. */
export async function createLoop(exec: Executor, prefix: string, name: unknown, options: unknown): Promise<Loop> {
  optionsOf('createLoop()', options, ['idType']);
  const { t, type } = await createLoopTable(exec, prefix, name, (options as { idType?: unknown } | undefined)?.idType);
  return openLoop(exec, prefix, t.loop, { idType: type }, type);
}
