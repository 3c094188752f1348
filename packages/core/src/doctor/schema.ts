import { SCHEMA_VERSION } from '../schema/migrations.js';
import { table } from '../tables.js';
import { TaskrowError } from '../errors.js';
import { toNumber } from '../validate.js';
import { result, type DoctorContext } from './context.js';
import type { DoctorCheck } from './types.js';

/**
 * The `schema` check: the schema version recorded under the prefix against this build's
 * `SCHEMA_VERSION`. No tables or an older version is a `fail` (run `migrate()`); a newer one a
 * `warn` (a newer build migrated; this one may lack what it relies on). Read-only.
 */
export async function schemaCheck(ctx: DoctorContext): Promise<DoctorCheck> {
  let stored: number | null;
  try {
    const { rows } = await ctx.exec.query<{ v: unknown }>(`SELECT MAX(\`version\`) AS v FROM ${table(ctx.prefix, 'schema_migrations')}`);
    stored = rows[0]?.v === null || rows[0]?.v === undefined ? null : toNumber(rows[0].v);
  } catch (err) {
    if (!(err instanceof TaskrowError && err.code === 'SCHEMA_MISSING')) throw err;
    stored = null;
  }
  const details = { stored, build: SCHEMA_VERSION };
  const fix = 'run migrate() (taskrow migrate)';
  if (stored === null) return result('schema', 'fail', `no taskrow tables under prefix "${ctx.prefix}"`, fix, details);
  if (stored < SCHEMA_VERSION) return result('schema', 'fail', `schema version ${stored}, this build needs ${SCHEMA_VERSION}`, fix, details);
  if (stored > SCHEMA_VERSION) {
    const fix2 = 'upgrade this process to the build that migrated, and do not let it run migrate()';
    return result('schema', 'warn', `schema version ${stored} is newer than this build's ${SCHEMA_VERSION}: a newer build migrated`, fix2, details);
  }
  return result('schema', 'ok', `schema version ${stored}, this build's`, undefined, details);
}
