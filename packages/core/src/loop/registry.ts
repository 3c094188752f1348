import type { Executor } from '../engine/executor.js';
import { invalid, TaskrowError } from '../errors.js';
import { idCodec, idTypeFromLabel, idTypeLabel, parseIdType, sameIdType } from './ids.js';
import { loopTableSql, registerLoopSql } from './schema.js';
import { loopRegistryTable, loopTable, type LoopTable } from './tables.js';
import type { LoopIdType } from './types.js';

/** The id type a loop was created with, or undefined when no loop of that name exists. */
export async function recordedIdType(exec: Executor, prefix: string, t: LoopTable): Promise<LoopIdType | undefined> {
  const { rows } = await exec.query<{ id_type: unknown }>(`SELECT \`id_type\` FROM ${loopRegistryTable(prefix)} WHERE \`name\` = ?`, [t.loop]);
  const row = rows[0];
  return row ? idTypeFromLabel(Buffer.isBuffer(row.id_type) ? row.id_type.toString('ascii') : String(row.id_type)) : undefined;
}

/**
 * Resolves a loop's id type from the registry. MUST reject with `NOT_FOUND` naming the loop when it
 * was never created (nothing is ever created by a read), and with `INVALID_ARGUMENT` naming both
 * types when the caller declared another id type than the recorded one.
 */
export async function resolveIdType(exec: Executor, prefix: string, t: LoopTable, declared: LoopIdType | undefined): Promise<LoopIdType> {
  const recorded = await recordedIdType(exec, prefix, t);
  const loopName = t.loop;
  if (recorded === undefined) {
    throw new TaskrowError(
      'NOT_FOUND',
      `loop ${JSON.stringify(loopName)} does not exist (no table ${t.name}): create it with taskrow.createLoop(${JSON.stringify(loopName)}, { idType })`,
    );
  }
  if (declared !== undefined && !sameIdType(declared, recorded)) {
    throw invalid(`loop ${JSON.stringify(loopName)} was created with idType ${idTypeLabel(recorded)}, not ${idTypeLabel(declared)}`);
  }
  return recorded;
}

/**
 * Creates a loop: records it with its id type, then creates its table. Idempotent, and safe to
 * race: the registry row is written first and the first writer's id type wins; a caller asking for
 * another id type than the recorded one gets `INVALID_ARGUMENT` and nothing is changed. MUST NOT
 * run inside an application transaction (DDL would commit it). Resolves to the recorded id type.
 */
export async function createLoopTable(exec: Executor, prefix: string, loopName: unknown, idType: unknown): Promise<{ t: LoopTable; type: LoopIdType }> {
  const t = loopTable(prefix, loopName);
  const name = t.loop;
  const type = parseIdType(idType === undefined ? 'int' : idType);
  if (exec.client.joined) {
    throw invalid(`createLoop(${JSON.stringify(name)}) cannot run inside an application transaction: CREATE TABLE would commit it`);
  }
  await exec.query(registerLoopSql(prefix), [name, idTypeLabel(type)]);
  const recorded = await resolveIdType(exec, prefix, t, type);
  await exec.query(loopTableSql(t, idCodec(recorded)));
  return { t, type: recorded };
}

/**
 * The DDL `createLoop` applies (the original's `create-doloop-table`): the loop's table and its
 * registry row, each statement ending in `;`. Needs the registry from `schemaSql()` / `migrate()`.
 */
export function loopSchemaSql(prefix: string, loopName: unknown, idType: unknown): string {
  const t = loopTable(prefix, loopName);
  const type = parseIdType(idType === undefined ? 'int' : idType);
  const register = registerLoopSql(prefix, { name: t.loop, label: idTypeLabel(type) });
  return `${loopTableSql(t, idCodec(type))};\n\n${register};\n`;
}
