import { sql, type SQL, type SQLChunk } from 'drizzle-orm';
import { InvalidArgumentError, type SqlValue } from '@taskrow/core';

/**
 * The positions of the `?` value placeholders in `text`: every `?` outside a quoted string
 * ('...', "..."), a quoted identifier (`...`) and a comment. A backslash escapes the next character
 * inside a string, as MySQL reads it by default.
 */
export function placeholderPositions(text: string): number[] {
  const at: number[] = [];
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\' && quote !== '`') i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"' || c === '`') {
      quote = c;
    } else if (c === '?') {
      at.push(i);
    } else if (c === '#' || (c === '-' && text[i + 1] === '-' && /\s/.test(text[i + 2] ?? ' '))) {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
    }
  }
  return at;
}

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
