import { UnsupportedServerError } from './errors.js';
import type { SqlConnection } from './port.js';
import { toNumber } from './validate.js';

/**
 * What the engine reads about the connected server, resolved once at connect time. Read-only.
 * Connecting MUST fail for servers older than MySQL 8.0.19 or MariaDB 10.6, so every feature
 * taskrow uses is present once a dialect exists: `SELECT ... FOR UPDATE SKIP LOCKED` (MySQL
 * 8.0.1, MariaDB 10.6), `JSON_TABLE` (MySQL 8.0.4) and table value constructors (`VALUES ROW(...)`,
 * MySQL 8.0.19; MariaDB's `VALUES (...)`, 10.3).
 */
export interface Dialect {
  readonly engine: 'mysql' | 'mariadb';
  /** `major.minor.patch`. */
  readonly version: string;
  /** `SELECT VERSION()` as the server reports it. */
  readonly versionString: string;
  /** The server's `max_allowed_packet` in bytes; statements are chunked well under it. */
  readonly maxAllowedPacket: number;
  /**
   * True on a node of a cluster where every node takes writes (MariaDB Galera with `wsrep_on`,
   * Group Replication in multi-primary mode), as seen at connect time. Row locks are per node there
   * and the second writer of a row loses certification, so every deadlock error may be a lost race
   * with another node: the engine gives such runs `CERTIFICATION_ATTEMPTS_FACTOR` times the attempts.
   */
  readonly multiWriter: boolean;
  /**
   * True on MariaDB: a locking read looks up in the table every index entry it walks that waits
   * for InnoDB's purge (rows changed since), also past the end of its range, where a plain read
   * passes them cheaply; MySQL 9.7's locking reads do not (measured: the locking read of a Loop
   * `get(100)` after 20,000 ids had cycled accessed 5,000 to 9,000 pages on MariaDB 10.11 while
   * purge was behind, 214 after it caught up; 316 on MySQL 9.7 either way). Reads that start where
   * such entries gather find their start with a plain read first where this is true; elsewhere
   * that read would only add a round trip.
   */
  readonly plainReadFirst: boolean;
  /**
   * The direction in which a range read of the `claim` index stops at the end of its range when the
   * index entries past that end wait for InnoDB's purge (rows deleted or moved since): `descending`
   * on MariaDB, whose ascending reads walk every such entry past the end (locking or not) whenever
   * a transaction older than those changes is open, as under any load; `ascending` on MySQL.
   * Measured after 3,000 jobs were claimed and completed beside an open write transaction, "does a
   * lease wait to expire" over the running range: 6,010-6,012 pages ascending and 4-6 descending on
   * MariaDB 10.11.19 and 11.8.9. On MySQL 9.7.4 neither direction always wins (582 ascending and 8
   * descending there; 51 and 30,066 in another state) and a 32-consumer drain read 107-110 pages a
   * job ascending against 120-124 descending.
   */
  /** `INSERT ... RETURNING` exists (MariaDB): a batch insert reads its ids back in the same statement. */
  readonly insertReturning: boolean;
  readonly rangeEndStops: 'ascending' | 'descending';
  /**
   * True on MariaDB with `innodb_snapshot_isolation` (10.6.18+, 10.11.8+, 11.x; ON by default from
   * 11.6): with it ON, a statement that makes a plain read and a locking read fails with error 1020
   * when its locking read meets a row changed after the statement began, at READ COMMITTED too
   * (measured on 11.8.9 and 10.11.19: `SELECT ... WHERE NOT EXISTS (plain read) FOR UPDATE SKIP
   * LOCKED` failed as another connection committed an insert into the range it was reading; the same
   * statement without the plain read did not). Such statements run with it OFF
   * (`lockingWithPlainReads`).
   */
  readonly snapshotCheckedLocks: boolean;
  /**
   * True on MySQL nodes of multi-writer clusters (Group Replication in multi-primary mode): a
   * claim's locking read there carries no plain reads in subqueries; its gate (paused,
   * rate-limited, due jobs waiting) is read by a statement of its own first. MySQL 9.7.4 in
   * multi-primary mode crashed (SIGSEGV, address 0x10) in two of five runs of the cluster suite
   * while running a claim's locking read with the gate's plain reads in it (`SELECT ..., EXISTS
   * (...) AS due ... WHERE ... AND NOT EXISTS (...) ... FOR UPDATE SKIP LOCKED`).
   */
  readonly lockingReadsAlone: boolean;
  /**
   * The server and database connected to, as `@@hostname:@@port/DATABASE()` at connect time, or
   * undefined for a dialect built without a connection. Only tells clients of one process apart
   * that reach the same tables (Loop getters of a process take turns per server, see `loop/gate.ts`).
   */
  readonly server?: string;
}

function atLeast(version: string, major: number, minor: number, patch = 0): boolean {
  const [a = 0, b = 0, c = 0] = version.split('.').map(Number);
  return a !== major ? a > major : b !== minor ? b > minor : c >= patch;
}

/**
 * TiDB speaks the MySQL protocol and accepts `SELECT ... FOR UPDATE SKIP LOCKED`, but does not honour
 * it as InnoDB does (the clause is parsed, and a claimer is not promised to skip rows another
 * transaction holds), so a Queue or Loop on it would be silently wrong. Recognised by `VERSION()`
 * (`8.0.11-TiDB-v7.5.1`) or, when its `server-version` setting hides that, by `@@version_comment`
 * (`TiDB Server (Apache License 2.0) ...`).
 */
export function isTiDB(versionString: string, versionComment = ''): boolean {
  return /tidb/i.test(versionString) || /tidb/i.test(versionComment);
}

/**
 * Builds the dialect from a `SELECT VERSION()` string (and `@@version_comment`, when known). MUST
 * reject servers older than MySQL 8.0.19 or MariaDB 10.6 (see `Dialect`), naming the version and
 * the oldest one accepted, and MUST reject TiDB, which accepts SKIP LOCKED without honouring it:
 * refusing at connect is better than a silently wrong queue.
 */
export function dialectFromVersion(
  versionString: string,
  maxAllowedPacket: number,
  versionComment = '',
  multiWriter = false,
  snapshotCheckedLocks = false,
): Dialect {
  if (isTiDB(versionString, versionComment)) {
    throw new UnsupportedServerError(
      `${versionString} is TiDB, which accepts SELECT ... FOR UPDATE SKIP LOCKED without honouring it as MySQL and MariaDB do; taskrow refuses it rather than run a silently wrong queue (docs/compatibility.md)`,
    );
  }
  // MariaDB's handshake (and some proxies) prefix "5.5.5-" to the real version.
  const m = /^(?:5\.5\.5-(?=\d+\.\d+\.\d+.*mariadb))?(\d+\.\d+\.\d+)/i.exec(versionString);
  if (!m?.[1]) throw new UnsupportedServerError(`cannot read the server version from ${JSON.stringify(versionString)}`);
  const version = m[1];
  const engine = /mariadb/i.test(versionString) ? 'mariadb' : 'mysql';
  const supported = engine === 'mysql' ? atLeast(version, 8, 0, 19) : atLeast(version, 10, 6);
  if (!supported) {
    const need = engine === 'mysql' ? 'MySQL 8.0.19' : 'MariaDB 10.6';
    const lacks = engine === 'mysql' && atLeast(version, 8, 0, 1) ? 'table value constructors (VALUES ROW(...))' : 'SELECT ... FOR UPDATE SKIP LOCKED';
    throw new UnsupportedServerError(`${engine === 'mysql' ? 'MySQL' : 'MariaDB'} ${versionString} has no ${lacks}; taskrow needs ${need} or newer`);
  }
  return Object.freeze({
    engine,
    version,
    versionString,
    maxAllowedPacket,
    multiWriter,
    plainReadFirst: engine === 'mariadb',
    rangeEndStops: routineDialect(engine).rangeEndStops,
    insertReturning: engine === 'mariadb',
    snapshotCheckedLocks: engine === 'mariadb' && snapshotCheckedLocks,
    lockingReadsAlone: engine === 'mysql' && multiWriter,
  });
}

/** What a stored routine is built with: the server family's facts that would otherwise need a branch inside it. */
export type RoutineDialect = Pick<Dialect, 'engine' | 'rangeEndStops'>;

/** The `RoutineDialect` of `engine`. */
export function routineDialect(engine: Dialect['engine']): RoutineDialect {
  return { engine, rangeEndStops: engine === 'mariadb' ? 'descending' : 'ascending' };
}

/**
 * `select` (a statement starting with `SELECT ` whose locking read comes with plain reads in
 * subqueries) as it MUST be sent: on a server with `snapshotCheckedLocks`, with
 * `innodb_snapshot_isolation` OFF for that statement (MariaDB's `SET STATEMENT`), so that its
 * locking read takes the latest committed rows as any locking read at READ COMMITTED does, instead
 * of failing with 1020 whenever a row in its way changed while it ran; as it is elsewhere.
 */
export function lockingWithPlainReads(dialect: Pick<Dialect, 'snapshotCheckedLocks'>, select: string): string {
  return dialect.snapshotCheckedLocks ? `SET STATEMENT innodb_snapshot_isolation = OFF FOR ${select}` : select;
}

/**
 * `rows` (each a parenthesised, comma-separated list of expressions) as a table value constructor,
 * the form a `WITH name (columns) AS (...)` takes: MySQL's `VALUES ROW(...), ROW(...)`, MariaDB's
 * `VALUES (...), (...)`. MUST be given at least one row.
 */
export function valuesTable(dialect: Pick<Dialect, 'engine'>, rows: readonly string[]): string {
  return `VALUES ${dialect.engine === 'mysql' ? `ROW${rows.join(', ROW')}` : rows.join(', ')}`;
}

/** Errors of a statement stopped by its time limit (`boundedSelect`): MySQL's 3024, MariaDB's 1969. */
export const STATEMENT_TIME_LIMIT_ERRNO: ReadonlySet<number> = new Set([3024, 1969]);

/**
 * `select` (a statement starting with `SELECT `) with a time limit of `ms` milliseconds (a
 * positive whole number) on the server, lock waits included: MySQL's `MAX_EXECUTION_TIME` hint,
 * MariaDB's `SET STATEMENT max_statement_time`. Only the statement stops, with one of `STATEMENT_TIME_LIMIT_ERRNO`; its
 * transaction goes on.
 */
export function boundedSelect(dialect: Pick<Dialect, 'engine'>, select: string, ms: number): string {
  return dialect.engine === 'mysql'
    ? `SELECT /*+ MAX_EXECUTION_TIME(${ms}) */ ${select.slice('SELECT '.length)}`
    : `SET STATEMENT max_statement_time = ${ms / 1000} FOR ${select}`;
}

/**
 * Whether the server is a node of a multi-writer cluster: Galera's `wsrep_on`, or Group
 * Replication in multi-primary mode with an ONLINE member. Read from the variable tables, which
 * need no privilege and do not fail when the variable is absent; any error reads as false.
 */
const MULTI_WRITER_SQL: Readonly<Record<Dialect['engine'], string>> = {
  mariadb: "SELECT VARIABLE_VALUE = 'ON' AS m FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'WSREP_ON'",
  mysql: `SELECT VARIABLE_VALUE = 'OFF' AND (SELECT COUNT(*) FROM performance_schema.replication_group_members WHERE MEMBER_STATE = 'ONLINE') > 0 AS m
    FROM performance_schema.global_variables WHERE VARIABLE_NAME = 'group_replication_single_primary_mode'`,
};

async function isMultiWriter(client: SqlConnection, engine: Dialect['engine']): Promise<boolean> {
  try {
    const { rows } = await client.query<{ m: unknown }>(MULTI_WRITER_SQL[engine]);
    return rows.length > 0 && toNumber(rows[0]!.m) === 1;
  } catch {
    return false;
  }
}

/** Asks the server once for its version, version comment, packet size, identity and cluster mode, and returns the frozen dialect. */
export async function resolveDialect(client: SqlConnection): Promise<Dialect> {
  const { rows } = await client.query<{ v: string; c: unknown; p: unknown; h: unknown; o: unknown; d: unknown }>(
    'SELECT VERSION() AS v, @@version_comment AS c, @@max_allowed_packet AS p, @@hostname AS h, @@port AS o, DATABASE() AS d',
  );
  const row = rows[0];
  if (!row) throw new UnsupportedServerError('SELECT VERSION() returned no row');
  const [v, p, c] = [String(row.v), toNumber(row.p), row.c == null ? '' : String(row.c)];
  const probe = dialectFromVersion(v, p, c);
  const server = `${String(row.h)}:${String(row.o)}/${String(row.d)}`;
  const snapshot = probe.engine === 'mariadb' && (await hasSnapshotIsolation(client));
  return Object.freeze({ ...dialectFromVersion(v, p, c, await isMultiWriter(client, probe.engine), snapshot), server });
}

/** Whether the MariaDB server has `innodb_snapshot_isolation` (see `Dialect.snapshotCheckedLocks`). */
async function hasSnapshotIsolation(client: SqlConnection): Promise<boolean> {
  try {
    await client.query('SELECT @@innodb_snapshot_isolation AS s');
    return true;
  } catch {
    return false;
  }
}
