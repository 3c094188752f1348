import { schemaSql, type MigrateResult } from '@taskrow/core';
import { parse } from '../args.js';
import { UsageError } from '../errors.js';
import { connect } from '../connect.js';
import type { Command } from './command.js';

/** `taskrow migrate`: creates or upgrades taskrow's tables. */
export const migrateCommand: Command = async (argv, out) => {
  const { values } = parse(argv);
  const conn = await connect(values);
  try {
    const result = await conn.tr.migrate();
    await out.write(values['json'] ? `${JSON.stringify(result)}\n` : migrateSummary(result));
    return 0;
  } finally {
    await conn.close();
  }
};

/** What `migrate` did, in lines a person reads: the version, and what became of the stored procedures. */
function migrateSummary(result: MigrateResult): string {
  const { created, replaced, refused, dropped } = result.routines;
  const lines = [
    `schema version ${result.version}; applied ${result.applied.length ? result.applied.join(', ') : 'nothing (up to date)'}`,
    `stored procedures: ${created.length} created, ${replaced.length} replaced, ${result.routines.unchanged.length} up to date${dropped.length ? `, ${dropped.length} of an earlier build dropped` : ''}${refused.length ? `, ${refused.length} refused` : ''}`,
    ...refused.map((r) => `  refused ${r.name}: ${r.error}`),
  ];
  if (refused.length) lines.push('taskrow works without them, with more statements per job; grant CREATE ROUTINE and ALTER ROUTINE and run migrate again');
  return `${lines.join('\n')}\n`;
}

/**
 * `taskrow schema`: prints the DDL `migrate` applies (doloop's create-doloop-table), with
 * `--engine mysql` or `--engine mariadb` the stored procedures for that server too. No connection.
 */
export const schemaCommand: Command = async (argv, out) => {
  const { values, positionals } = parse(argv);
  if (positionals.length > 0) throw new UsageError(`schema takes no arguments, got ${JSON.stringify(positionals[0])}`);
  const prefix = values['prefix'] as string | undefined;
  const engine = values['engine'];
  if (engine !== undefined && engine !== 'mysql' && engine !== 'mariadb')
    throw new UsageError(`--engine must be mysql or mariadb, got ${JSON.stringify(engine)}`);
  await out.write(schemaSql(prefix ?? 'taskrow_', engine));
  return 0;
};
