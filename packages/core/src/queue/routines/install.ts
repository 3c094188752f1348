import { createHash } from 'node:crypto';
import type { Executor } from '../../engine/executor.js';
import { TaskrowError } from '../../errors.js';
import { queueTables, type QueueTables } from '../model/tables.js';
import { routineDialect, type Dialect } from '../../dialect.js';
import type { Routine } from './routine.js';

/** What `installRoutines` did to each routine, by name (unquoted). */
export interface RoutinesResult {
  /** Created: missing before. */
  readonly created: string[];
  /** Replaced: present with another text (an older or newer build's). */
  readonly replaced: string[];
  /** Present with this build's text: left alone. */
  readonly unchanged: string[];
  /**
   * Refused by the server (no `CREATE ROUTINE` or `ALTER ROUTINE` privilege, a proxy or server
   * without stored procedures), with its message: taskrow then takes its path without them.
   * `migrate()` tries again each time it runs.
   */
  readonly refused: { readonly name: string; readonly error: string }[];
  /** Dropped: installed by an earlier build, no longer called (see `installRoutines`'s `retired`). */
  readonly dropped: string[];
}

/** The marker the installer writes into a routine's comment: `taskrow <hash>: ...`. */
const MARK = "COMMENT 'taskrow: ";

/** `sql` as installed: its text's hash (16 hex digits of SHA-256) in its comment. */
export function withHash(sql: string): { readonly sql: string; readonly hash: string } {
  if (sql.split(MARK).length !== 2) throw new TaskrowError('DATABASE_ERROR', `a routine's text must carry one ${MARK}...' (got ${sql.slice(0, 80)})`);
  const hash = createHash('sha256').update(sql).digest('hex').slice(0, 16);
  return { sql: sql.replace(MARK, `COMMENT 'taskrow ${hash}: `), hash };
}

/** The hash a routine's comment carries, if it was installed by this installer. */
const hashOf = (comment: unknown): string | undefined => /^taskrow ([0-9a-f]{16}):/.exec(String(comment ?? ''))?.[1];

/** A quoted name unquoted (information_schema compares names as text). */
const unquoted = (name: string): string => name.replaceAll('`', '');

/** Every routine's statement under `prefix` on `engine`, with its name and hash, in `routines` order. */
export function routineStatements(routines: readonly Routine[], prefix: string, engine: Dialect['engine']): { name: string; sql: string; hash: string }[] {
  const t: QueueTables = queueTables(prefix);
  const d = routineDialect(engine);
  return routines.map((r) => ({ name: unquoted(r.name(t)), ...withHash(r.create(t, d, prefix)) }));
}

/**
 * Installs `routines` under `prefix` by content: reads the hash each one's comment carries, creates
 * the missing ones, replaces (drops, then creates) those whose text differs, and leaves the rest
 * alone, so a database that has them all runs no DDL. Each procedure of `retired` (names without
 * the prefix) that taskrow installed is dropped first. Safe from many processes at once: a create
 * that finds the routine made meanwhile counts it unchanged when its hash is this build's. A
 * routine the server refuses is reported, not thrown (see `RoutinesResult.refused`); a lost
 * connection or any other failure is thrown. A CALL that comes between a drop and its create
 * finds no procedure and takes the path without it.
 */
export async function installRoutines(exec: Executor, routines: readonly Routine[], prefix: string, retired: readonly string[] = []): Promise<RoutinesResult> {
  const wanted = routineStatements(routines, prefix, exec.dialect.engine);
  const old = retired.map((name) => `${prefix}${name}`);
  const have = await installedHashes(exec, [...wanted.map((w) => w.name), ...old]);
  const out: RoutinesResult = { created: [], replaced: [], unchanged: [], refused: [], dropped: [] };
  for (const name of old.filter((n) => typeof have.get(n) === 'string')) {
    try {
      await exec.query(`DROP PROCEDURE IF EXISTS \`${name}\``);
      out.dropped.push(name);
    } catch (err) {
      if (!(err instanceof TaskrowError) || err.code !== 'DATABASE_ERROR') throw err;
      out.refused.push({ name, error: err.message });
    }
  }
  for (const w of wanted) {
    const found = have.get(w.name);
    if (found === w.hash) {
      out.unchanged.push(w.name);
      continue;
    }
    try {
      if (found !== undefined) await exec.query(`DROP PROCEDURE IF EXISTS \`${w.name}\``);
      await exec.query(w.sql);
      (found === undefined ? out.created : out.replaced).push(w.name);
    } catch (err) {
      if (!(err instanceof TaskrowError) || err.code !== 'DATABASE_ERROR') throw err;
      if (err.errno === ALREADY_EXISTS && (await installedHashes(exec, [w.name])).get(w.name) === w.hash) out.unchanged.push(w.name);
      else out.refused.push({ name: w.name, error: err.message });
    }
  }
  return out;
}

/** MySQL's and MariaDB's "PROCEDURE ... already exists". */
const ALREADY_EXISTS = 1304;

/** The hash (or `null`, for one taskrow did not mark) of each routine of `names` that exists in the current database. */
export async function installedHashes(exec: Executor, names: readonly string[]): Promise<Map<string, string | null>> {
  const { rows } = await exec.query<{ n: unknown; c: unknown }>(
    `SELECT ROUTINE_NAME AS n, ROUTINE_COMMENT AS c FROM information_schema.ROUTINES
      WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME IN (${names.map(() => '?').join(', ')})`,
    names,
  );
  return new Map(rows.map((r) => [String(r.n), hashOf(r.c) ?? null]));
}
