/**
 * The type of a loop's ids, chosen when the loop is created and recorded with it:
 * - `'int'`: signed 32-bit integers (`INT`), given and returned as numbers;
 * - `'bigint'`: signed 64-bit integers (`BIGINT`), given as numbers or bigints, returned as bigints;
 * - `{ string: maxLength }`: exact strings (`VARBINARY(maxLength)`) of 1 to `maxLength` UTF-8 bytes.
 *   `"a"`, `"A"` and `"a "` are three ids: nothing is trimmed, folded or normalised.
 */
export type LoopIdType = 'int' | 'bigint' | { readonly string: number };

/** Any id a loop can hold. */
export type LoopId = number | bigint | string;

/** The id type `get()`, `check()` and `stats()` return for a loop of id type `T`. */
export type LoopIdOf<T extends LoopIdType> = T extends 'int' ? number : T extends 'bigint' ? bigint : string;

/** What the methods of a loop of ids `Id` accept as one id: a bigint loop also takes safe-integer numbers. */
export type LoopIdInput<Id extends LoopId> = Id extends bigint ? bigint | number : Id;

/** Options of `taskrow.loop()`. */
export interface LoopOptions<T extends LoopIdType = LoopIdType> {
  /**
   * The id type the caller expects. When given, ids are checked against it before any statement
   * runs, and the first operation fails with `INVALID_ARGUMENT` if the loop was created with another.
   */
  readonly idType?: T;
  /**
   * How this handle's `get()`s take turns. Default `'auto'`: the getters of the loop in this
   * process (every handle with `'auto'`, through any client reaching the same server and
   * database) run as many `get()`s at once as their latencies say the server keeps up with: while
   * a `get()` takes about as long as the quickest lately (a slow network, a server with cores to
   * spare) the number grows, up to 256; when the latencies rise with the number at once (getters
   * skip-reading each other's locked rows on a server with few cores) it falls, down to two. The
   * others wait in the process, holding no connection, until a turn is theirs, or go on without
   * one once no turn has ended for 1 s (then this process's getters go on without turns for 10 s). `true`: one `get()` at a time, in the process and then
   * on the server: it waits, on the server, until no other getter of the loop with `turns: true` is
   * between its first read and its commit (a lock on the loop's registry row, held until the
   * `get()` commits), for at most 1 s; a getter whose turn has not come by then takes its ids
   * without it (and the handle stops waiting for turns for 10 s), so a stalled getter never stops
   * the others. `false`: every `get()` at once. Which ids a `get()` takes is the same whichever:
   * its locking read still skips rows other getters hold (README: "Taking turns"). Ignored inside
   * `taskrow.in(tx)`.
   */
  readonly turns?: boolean | 'auto';
}

/** Options of `taskrow.createLoop()` and `taskrow.loopSchemaSql()`. */
export interface CreateLoopOptions<T extends LoopIdType = LoopIdType> {
  /** Default `'int'`, as the original's `id_type`. */
  readonly idType?: T;
}

/** Every writer accepts `dryRun`: the work runs in a transaction that is rolled back (the original's `test=True`). */
export interface DryRunOption {
  /** Run, roll back, and resolve to what the call would have returned. Default false. */
  readonly dryRun?: boolean;
}

export interface AddOptions extends DryRunOption {
  /** Record the ids as updated now (`last_updated` = now) instead of never. Default false. */
  readonly updated?: boolean;
}

export interface GetOptions extends DryRunOption {
  /** Milliseconds the returned ids stay locked: whole seconds (a multiple of 1000), at least 1000. Default 3,600,000 (an hour). */
  readonly lockFor?: number;
  /** Unlocked ids updated less than this many milliseconds ago are not returned (whole seconds, may be negative). Default 3,600,000. */
  readonly minLoopTime?: number;
}

export interface AutoAddOptions extends DryRunOption {
  /** Add ids that are not in the loop yet. Default true. */
  readonly autoAdd?: boolean;
}

export interface BumpOptions extends AutoAddOptions {
  /**
   * Milliseconds from now, whole seconds (may be negative), that become the ids' `lock_until`,
   * only where that lowers it. Default 0: top priority without locking.
   */
  readonly lockFor?: number;
}

/** What `check()` reports for one id, in milliseconds (whole seconds) by the database clock. */
export interface LoopCheck {
  /** Now minus `last_updated`; null when the id was never updated. */
  readonly sinceUpdated: number | null;
  /** `lock_until` minus now (negative: bumped that long ago); null when the id is not locked. */
  readonly lockedFor: number | null;
}

/**
 * The original's `stats()`, key for key (camelCase), its times in milliseconds. Every number defaults
 * to 0; only `minId` and `maxId` are null, and only when the loop is empty.
 */
export interface LoopStats<Id extends LoopId = LoopId> {
  /** Ids whose `lock_until` is now or in the past: the top priority of `get()`. */
  readonly bumped: number;
  /** Ids whose `lock_until` is in the future. */
  readonly locked: number;
  /** Least / most milliseconds any bumped id has been bumped for (now minus `lock_until`). */
  readonly minBumpTime: number;
  readonly maxBumpTime: number;
  readonly minId: Id | null;
  readonly maxId: Id | null;
  /** Least / most milliseconds any locked id stays locked (`lock_until` minus now). */
  readonly minLockTime: number;
  readonly maxLockTime: number;
  /** Least / most milliseconds any unlocked, updated id has gone since its update. */
  readonly minUpdateTime: number;
  readonly maxUpdateTime: number;
}

/**
 * A task loop (doloop): a table of ids to update again and again. Workers `get()` the most overdue
 * ids, which stay locked for `lockFor` milliseconds, update them, and report them with `did()`.
 *
 * Every method that takes ids takes one id or an iterable of them; the whole batch is validated
 * before any statement runs, so bad input changes nothing. Duplicates count once. Durations are in
 * milliseconds, as everywhere in taskrow; the loop keeps whole seconds of the database clock
 * (`UNIX_TIMESTAMP()`), so each one it takes is a multiple of 1000. Batches over 1,000 ids are written 1,000 at
 * a time, each part committed on its own (all in one transaction under `taskrow.in(tx)`).
 */
export interface Loop<Id extends LoopId = LoopId> {
  readonly name: string;
  /** The loop's table name (unquoted): `<prefix>loop_<name>`. */
  readonly table: string;
  /** The id type the loop was created with. Rejects with `NOT_FOUND` when the loop does not exist. */
  idType(): Promise<LoopIdType>;
  /** Adds ids. Resolves to the number that were not in the loop. Existing ids are left as they are. */
  add(ids: LoopIdInput<Id> | Iterable<LoopIdInput<Id>>, options?: AddOptions): Promise<number>;
  /** Removes ids. Resolves to the number that were in the loop. */
  remove(ids: LoopIdInput<Id> | Iterable<LoopIdInput<Id>>, options?: DryRunOption): Promise<number>;
  /**
   * Locks and returns up to `limit` ids, in the original's order: first ids whose lock expired or
   * that were bumped (`lock_until <= now`), by `lock_until`, `last_updated`, id; then unlocked ids
   * never updated, then unlocked ids by oldest `last_updated` (only those updated at least
   * `minLoopTime` milliseconds ago), ties by id. The returned ids get `lock_until = now + lockFor`.
   *
   * Concurrency: MUST hand an id to at most one of any number of concurrent callers until its lock
   * expires or it is reported (`did` / `unlock`). MUST NOT wait on rows another caller holds: rows
   * locked by a concurrent transaction are skipped (SKIP LOCKED); no table lock, no GET_LOCK. A
   * caller that loses a race for a row simply receives other ids, or fewer. While its transaction
   * runs it may hold up to `limit` further candidate rows that it does not return.
   *
   * `limit` 0 resolves to [] without a statement. `lockFor` must be at least 1000.
   */
  get(limit: number, options?: GetOptions): Promise<Id[]>;
  /**
   * Marks ids updated now and unlocks them. With `autoAdd` (default) unknown ids are added first.
   * Resolves to the number of ids marked (with `autoAdd`: every distinct id given).
   */
  did(ids: LoopIdInput<Id> | Iterable<LoopIdInput<Id>>, options?: AutoAddOptions): Promise<number>;
  /** Unlocks ids without marking them updated. Resolves to the number of ids unlocked (found or added). */
  unlock(ids: LoopIdInput<Id> | Iterable<LoopIdInput<Id>>, options?: AutoAddOptions): Promise<number>;
  /**
   * Sets `lock_until = now + lockFor` only where that LOWERS it (or it is unset): repeated bumps
   * never keep an id locked. `lockFor` 0 gives top priority without locking, negative gives higher
   * priority still (as if bumped that long ago), positive locks the id for a while and then gives it
   * top priority (a positive bump of an unlocked id locks it). Resolves to the number of ids bumped.
   */
  bump(ids: LoopIdInput<Id> | Iterable<LoopIdInput<Id>>, options?: BumpOptions): Promise<number>;
  /** Reports ids (absent ids are left out of the map). Read-only: one primary-key lookup per id. */
  check(ids: LoopIdInput<Id> | Iterable<LoopIdInput<Id>>): Promise<Map<Id, LoopCheck>>;
  /**
   * The loop's statistics, read in one statement (one consistent snapshot). Read-only and cheap on
   * any size: it reads index ends and only the locked and bumped rows.
   */
  stats(): Promise<LoopStats<Id>>;
}
