import type { Executor } from '../engine/executor.js';
import { TaskrowError } from '../errors.js';
import { table } from '../tables.js';
import { toNumber } from '../validate.js';
import { SCHEMA_VERSION } from './migrations.js';

/**
 * Refuses, with `SCHEMA_TOO_NEW` naming both versions, a build older than the schema under
 * `prefix` allows: one whose `SCHEMA_VERSION` is below a `min_build` recorded by a newer build's
 * `migrate()` (see `Migration.breaksOlderBuilds`). One read, no write. A prefix not migrated yet
 * passes (`migrate()` comes next); a schema older than this build passes too, and its missing
 * tables or columns then fail as `SCHEMA_MISSING` with "run taskrow.migrate()".
 */
export async function checkSchemaCompat(exec: Executor, prefix: string): Promise<void> {
  let row: { v: unknown; m: unknown } | undefined;
  try {
    row = (await exec.query<{ v: unknown; m: unknown }>(`SELECT MAX(\`version\`) AS v, MAX(\`min_build\`) AS m FROM ${table(prefix, 'schema_migrations')}`))
      .rows[0];
  } catch (err) {
    if (err instanceof TaskrowError && err.code === 'SCHEMA_MISSING') return; // not migrated yet
    throw err;
  }
  const needs = row?.m === null || row?.m === undefined ? 0 : toNumber(row.m);
  if (needs <= SCHEMA_VERSION) return;
  throw new TaskrowError(
    'SCHEMA_TOO_NEW',
    `the taskrow schema under prefix "${prefix}" is at version ${toNumber(row!.v)} and may only be used by builds that know version ${needs} or later; this build knows versions up to ${SCHEMA_VERSION}: upgrade @taskrow/core and its adapter to the release that migrated it`,
  );
}
