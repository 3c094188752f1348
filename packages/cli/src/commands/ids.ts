import type { LoopId, LoopIdType } from '@taskrow/core';
import { UsageError } from '../errors.js';

/** `int`, `bigint` or `string:N` from the command line. */
export function parseIdTypeFlag(raw: string | undefined): LoopIdType | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'int' || raw === 'bigint') return raw;
  const m = /^string:(\d+)$/.exec(raw);
  if (m) return { string: Number(m[1]) };
  throw new UsageError(`--id-type must be int, bigint or string:N (N bytes), got ${JSON.stringify(raw)}`);
}

/**
 * Turns a command-line id into the loop's id type: integers for `int` (must be whole, exact),
 * bigints for `bigint`, the text itself for string loops. A non-integer for an integer loop is a
 * UsageError naming the id.
 */
export function idFromText(text: string, type: LoopIdType): LoopId {
  if (typeof type === 'object') return text;
  if (!/^-?\d+$/.test(text)) throw new UsageError(`id ${JSON.stringify(text)} is not an integer (the loop's ids are ${type})`);
  if (type === 'bigint') return BigInt(text);
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new UsageError(`id ${JSON.stringify(text)} is out of range for an int loop`);
  return n;
}

/** An id as text for output (bigints without the `n`). */
export function idToText(id: LoopId): string {
  return typeof id === 'string' ? id : String(id);
}
