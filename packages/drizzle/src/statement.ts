import { sql, type SQL, type SQLChunk } from 'drizzle-orm';
import { InvalidArgumentError, type SqlValue } from '@taskrow/core';
import { placeholderPositions } from './placeholders.js';

/**
 * One statement with `?` placeholders as a Drizzle `SQL` object: the text between placeholders as
 * raw chunks, each value as a Drizzle parameter. Drizzle's MySQL dialect turns every parameter back
 * into a `?` and hands the values to mysql2 beside the text, so no value is ever written into it.
 */
export function toDrizzleSql(text: string, params: readonly SqlValue[]): SQL {
  const at = placeholderPositions(text);
  if (at.length !== params.length) {
    throw new InvalidArgumentError('INVALID_ARGUMENT', `@taskrow/drizzle: a statement with ${at.length} placeholders was given ${params.length} values`);
  }
  if (at.length === 0) return sql.raw(text);
  const chunks: SQLChunk[] = [];
  let from = 0;
  at.forEach((pos, i) => {
    chunks.push(sql.raw(text.slice(from, pos)), sql.param(params[i]));
    from = pos + 1;
  });
  chunks.push(sql.raw(text.slice(from)));
  return sql.join(chunks);
}
