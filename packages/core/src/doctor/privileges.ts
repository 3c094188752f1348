import { holds, readGrants, type GrantsOnDatabase } from './grants.js';
import { result, worst, type DoctorContext } from './context.js';
import type { DoctorCheck, DoctorStatus } from './types.js';

/** A feature, the privileges it needs on the database, and how bad their absence is. */
interface Need {
  readonly feature: string;
  readonly privileges: readonly string[];
  readonly missing: DoctorStatus;
}

/** What each feature needs (docs/operations.md, Privileges); the doorbell across users is reported in `details` only. */
const NEEDS: readonly Need[] = [
  { feature: 'every primitive', privileges: ['SELECT', 'INSERT', 'UPDATE', 'DELETE'], missing: 'fail' },
  { feature: 'creating tables with migrate() and createLoop()', privileges: ['CREATE'], missing: 'warn' },
  { feature: 'installing stored procedures with migrate()', privileges: ['CREATE ROUTINE', 'ALTER ROUTINE'], missing: 'warn' },
  { feature: 'running the stored procedures', privileges: ['EXECUTE'], missing: 'warn' },
];

/** The account as `SHOW GRANTS` names it: `'user'@'host'`. */
const account = (current: string): string => {
  const at = current.lastIndexOf('@');
  return at < 0 ? `'${current}'` : `'${current.slice(0, at)}'@'${current.slice(at + 1)}'`;
};

/**
 * The `privileges` check: reads `SHOW GRANTS FOR CURRENT_USER()` and says, per feature, which
 * privileges on the current database are missing, with the `GRANT` that adds them. A grant it
 * could not weigh (roles, table-level grants, partial revokes) makes a missing privilege a `warn`
 * naming that grant, never a `fail`. Read-only.
 */
export async function privilegesCheck(ctx: DoctorContext): Promise<DoctorCheck> {
  const who = await ctx.exec.query<{ u: unknown; db: unknown }>('SELECT CURRENT_USER() AS u, DATABASE() AS db');
  const user = String(who.rows[0]?.u ?? '');
  const database = String(who.rows[0]?.db ?? '');
  const { rows } = await ctx.exec.query<Record<string, unknown>>('SHOW GRANTS FOR CURRENT_USER()');
  const grants = readGrants(
    rows.map((r) => String(Object.values(r)[0] ?? '')),
    database,
  );
  const missing = NEEDS.map((n) => ({ ...n, lacking: n.privileges.filter((p) => !holds(grants, p)) })).filter((n) => n.lacking.length > 0);
  const details = { user, database, doubts: grants.doubts, ...optional(grants) };
  if (missing.length === 0) return result('privileges', 'ok', `${user} holds every privilege taskrow's features need on \`${database}\``, undefined, details);
  const status = worst(missing.map((n) => (grants.doubts.length > 0 ? 'warn' : n.missing)));
  const lacking = [...new Set(missing.flatMap((n) => n.lacking))];
  const summary = `${user} lacks ${missing.map((n) => `${n.lacking.join(', ')} (${n.feature})`).join('; ')} on \`${database}\``;
  const doubt = grants.doubts.length > 0 ? `; not weighed: ${grants.doubts.join(' | ')}` : '';
  const fix = `GRANT ${lacking.join(', ')} ON \`${database}\`.* TO ${account(user)}; then run migrate() (taskrow migrate)`;
  return result('privileges', status, `${summary}${doubt}`, fix, details);
}

/** Privileges no feature needs on one user, and what they add. */
function optional(grants: GrantsOnDatabase): Record<string, boolean> {
  return {
    /** Reads InnoDB's history list length (the `purge-lag` check). */
    process: holds(grants, 'PROCESS'),
    /** Rings the doorbell of workers that connect as another user. */
    connectionAdmin: ['CONNECTION_ADMIN', 'CONNECTION ADMIN', 'SUPER'].some((p) => holds(grants, p)),
  };
}
