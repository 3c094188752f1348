import { randomInt } from 'node:crypto';
import mysql from 'mysql2/promise';

// Köhntopp's SKIP LOCKED job queue ("MySQL: A job queue in Python", 2021), statement for statement,
// through bare mysql2 with autocommit off as in MySQLdb.

/** His table: payload columns d and e, status, owner; indexes on d (the candidate search) and status. */
export const BASELINE_DDL = (t: string): string => `CREATE TABLE ${t} (
  id INTEGER NOT NULL PRIMARY KEY AUTO_INCREMENT,
  d VARCHAR(64) NOT NULL,
  e VARCHAR(64) NOT NULL,
  status ENUM('unclaimed', 'claimed', 'done') NOT NULL,
  owner_id INTEGER NULL,
  owner_date DATETIME NULL,
  INDEX (d),
  INDEX (status)
) ENGINE=InnoDB`;

/**
 * 64 random lowercase letters, as his generator makes d and e. `Math.random`, not a crypto source:
 * the producers of every side make their payloads inside the timed window, and 64 calls of
 * `crypto.randomInt` a string (through the test runner's module bindings) cost about 50 µs of
 * this process's CPU a job, a third of what taskrow itself spends on one.
 */
export function letters(): string {
  let s = '';
  for (let i = 0; i < 64; i++) s += String.fromCharCode(97 + Math.floor(Math.random() * 26));
  return s;
}

/** Counters every baseline actor shares: jobs done, deadlocks its callers had to retry, other retried conflicts. */
export interface BaselineCounts {
  done: number;
  deadlocks: number;
  /** Lock wait timeouts (1205) and MariaDB 11.6+ snapshot-isolation conflicts (1020) retried. */
  conflicts?: number;
}

const RETRYABLE = [1213, 1205, 1020];
const errnoOf = (err: unknown): number => (err as { errno?: number }).errno ?? 0;

/**
 * Runs `fn`; on a deadlock, a lock wait timeout or (MariaDB 11.6+, REPEATABLE READ) a "record has
 * changed since last read" conflict, rolls back, counts it, and runs it again (as his callers must).
 */
async function retrying(conn: mysql.Connection, counts: BaselineCounts, fn: () => Promise<void>): Promise<void> {
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!RETRYABLE.includes(errnoOf(err))) throw err;
      if (errnoOf(err) === 1213) counts.deadlocks += 1;
      else counts.conflicts = (counts.conflicts ?? 0) + 1;
      await conn.rollback().catch(() => undefined);
    }
  }
}

/** Fills his table with `n` unclaimed jobs, untimed, in multi-row inserts. */
export async function fillBaseline(pool: mysql.Pool, t: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, n - i) }, () => [letters(), letters(), 'unclaimed']);
    await pool.query(`INSERT INTO ${t} (d, e, status) VALUES ?`, [rows]);
  }
}

/** His generator: single-row inserts, a commit every tenth; `n` jobs, or until `deadline` (ms, performance.now()). */
export async function baselineProducer(conn: mysql.Connection, t: string, n: number, counts: BaselineCounts, deadline: number): Promise<void> {
  const cmd = `insert into ${t} (id,d,e,status,owner_id,owner_date) values (NULL,?,?,'unclaimed',NULL,NULL)`;
  for (let i = 0; i < n && performance.now() < deadline; i += 10) {
    const step = Math.min(10, n - i);
    await retrying(conn, counts, async () => {
      for (let k = 0; k < step; k++) await conn.query(cmd, [letters(), letters()]);
      await conn.commit();
    });
  }
}

/**
 * His consumer, until `counts.done` reaches `total` or `deadline` (ms, performance.now()) passes:
 * candidate SELECT on a random first letter, locking SELECT ... FOR UPDATE SKIP LOCKED by id,
 * UPDATE to claimed, COMMIT, (process), DELETE, COMMIT; an empty round still COMMITs.
 */
export async function baselineConsumer(
  conn: mysql.Connection,
  t: string,
  consumerId: number,
  total: number,
  deadline: number,
  counts: BaselineCounts,
): Promise<void> {
  const candidateCmd = `select id from ${t} where d like ? and status = ? limit 100`;
  const lockCmd = `select id, d, e from ${t} where status = 'unclaimed' and id in (?) for update skip locked`;
  const claimCmd = `update ${t} set status = 'claimed', owner_date = now(), owner_id = ? where id in (?)`;
  const doneCmd = `delete from ${t} where id in (?)`;
  while (counts.done < total && performance.now() < deadline) {
    let ids: number[] = [];
    await retrying(conn, counts, async () => {
      ids = [];
      const search = `${String.fromCharCode(97 + randomInt(26))}%`;
      const [cand] = await conn.query<mysql.RowDataPacket[]>(candidateCmd, [search, 'unclaimed']);
      if (cand.length === 0) return void (await conn.commit());
      const [locked] = await conn.query<mysql.RowDataPacket[]>(lockCmd, [cand.map((r) => r['id'])]);
      if (locked.length === 0) return void (await conn.commit());
      const claimed = locked.map((r) => r['id'] as number);
      await conn.query(claimCmd, [consumerId, claimed]);
      await conn.commit();
      ids = claimed;
    });
    if (ids.length === 0) continue;
    // doit(claimed_records): trivial
    await retrying(conn, counts, async () => {
      await conn.query(doneCmd, [ids]);
      await conn.commit();
    });
    counts.done += ids.length;
  }
}

/** A connection with autocommit off, as MySQLdb opens them. */
export async function baselineConnection(url: string): Promise<mysql.Connection> {
  const conn = await mysql.createConnection(url);
  await conn.query('SET autocommit = 0');
  return conn;
}
