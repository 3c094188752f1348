/**
 * Reading `SHOW GRANTS FOR CURRENT_USER()` as MySQL 8+ and MariaDB 10.6+ print it: which
 * privileges the user holds on the current database, globally or on that database. Table-, column-
 * and routine-level grants, roles and partial revokes are noted as doubts, not weighed.
 */

/** What the grants say about one database. */
export interface GrantsOnDatabase {
  /** Privileges held globally (`ON *.*`), upper case, `ALL` for `ALL PRIVILEGES`. */
  readonly global: ReadonlySet<string>;
  /** Privileges held on the database (`ON db.*`, a wildcard pattern that matches it included). */
  readonly database: ReadonlySet<string>;
  /** Lines or parts not understood or not weighed, quoted. */
  readonly doubts: readonly string[];
}

/** One backtick-quoted name (doubled backticks inside), a bare name, or `*`. */
const NAME = '(?:`(?:[^`]|``)*`|[^\\s.`]+|\\*)';
const GRANT_ON = new RegExp(`^GRANT\\s+(.+?)\\s+ON\\s+(?:(TABLE|PROCEDURE|FUNCTION|PACKAGE(?: BODY)?)\\s+)?(${NAME})(?:\\.(${NAME}))?\\s+TO\\s`, 'i');

/** `name` without its backticks. */
const unquote = (name: string): string => (name.startsWith('`') ? name.slice(1, -1).replaceAll('``', '`') : name);

/** The privileges of a grant's list, upper case, column lists dropped; `ALL PRIVILEGES` as `ALL`. */
export function privilegeList(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of `${list},`) {
    if (ch === '(') depth += 1;
    if (ch === ')') depth -= 1;
    if (ch === ',' && depth === 0) {
      const name = current
        .replace(/\(.*\)/s, '')
        .trim()
        .replace(/\s+/g, ' ')
        .toUpperCase();
      if (name !== '') out.push(name === 'ALL PRIVILEGES' ? 'ALL' : name);
      current = '';
    } else current += ch;
  }
  return out;
}

/**
 * Whether the database pattern of a grant names `database`: exactly, or as a `LIKE` pattern
 * (`%` and `_` wildcards, `\_` and `\%` literal), as both servers match database-level grants.
 */
export function databaseMatches(pattern: string, database: string): boolean {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (ch === '%') re += '.*';
    else if (ch === '_') re += '.';
    else re += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${re}$`, 's').test(database);
}

/**
 * Reads the lines of `SHOW GRANTS FOR CURRENT_USER()` for `database`. MUST NOT throw: a line it
 * does not understand (a role granted, a partial revoke, a table-level grant on `database`) is
 * returned in `doubts`, and the privileges it may give are not counted.
 */
export function readGrants(lines: readonly string[], database: string): GrantsOnDatabase {
  const global = new Set<string>();
  const onDatabase = new Set<string>();
  const doubts: string[] = [];
  for (const line of lines) {
    const m = GRANT_ON.exec(line);
    if (!m) {
      if (/^(GRANT|REVOKE)\s/i.test(line)) doubts.push(line);
      continue; // SET DEFAULT ROLE and the like grant nothing
    }
    const [, list = '', kind, db = '', tbl] = m;
    const privileges = privilegeList(list);
    if (privileges.includes('PROXY')) continue;
    if (kind === undefined && db === '*' && (tbl === undefined || tbl === '*')) for (const p of privileges) global.add(p);
    else if (kind === undefined && tbl === '*' && databaseMatches(unquote(db), database)) for (const p of privileges) onDatabase.add(p);
    else if (databaseMatches(unquote(db), database)) doubts.push(line);
  }
  return { global, database: onDatabase, doubts };
}

/** Privileges an `ALL` on a database does not include: they exist only globally. */
const GLOBAL_ONLY = new Set(['PROCESS', 'SUPER', 'CONNECTION_ADMIN', 'CONNECTION ADMIN', 'REPLICATION CLIENT', 'BINLOG MONITOR']);

/** Whether `grants` give `privilege` on the database: globally, or on the database unless it exists only globally. */
export function holds(grants: GrantsOnDatabase, privilege: string): boolean {
  if (grants.global.has('ALL') || grants.global.has(privilege)) return true;
  if (GLOBAL_ONLY.has(privilege)) return false;
  return grants.database.has('ALL') || grants.database.has(privilege);
}
