import { schemaSql } from '@taskrow/core';
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
    await out.write(values['json'] ? `${JSON.stringify(result)}\n` : `schema version ${result.version}; applied ${result.applied.length ? result.applied.join(', ') : 'nothing (up to date)'}\n`);
    return 0;
  } finally {
    await conn.close();
  }
};

/** `taskrow schema`: prints the DDL `migrate` applies (doloop's create-doloop-table). No connection. */
export const schemaCommand: Command = async (argv, out) => {
  const { values, positionals } = parse(argv);
  if (positionals.length > 0) throw new UsageError(`schema takes no arguments, got ${JSON.stringify(positionals[0])}`);
  const prefix = values['prefix'] as string | undefined;
  await out.write(schemaSql(prefix ?? 'taskrow_'));
  return 0;
};
