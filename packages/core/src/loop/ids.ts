import { invalid } from '../errors.js';
import type { SqlValue } from '../port.js';
import { show } from '../validate.js';
import type { LoopId, LoopIdType } from './types.js';

/** The longest string id, in UTF-8 bytes: InnoDB's index key limit. */
export const MAX_LOOP_ID_BYTES = 3072;

const INT_MIN = -(2 ** 31);
const INT_MAX = 2 ** 31 - 1;
const BIGINT_MIN = -(2n ** 63n);
const BIGINT_MAX = 2n ** 63n - 1n;

/** One validated id: what the caller gets back, what is bound, and how it sorts (primary-key order). */
export interface EncodedId {
  readonly id: LoopId;
  readonly param: SqlValue;
  /** Equal for equal ids; used to drop duplicates. */
  readonly key: string;
  /** Bytes the id adds to a statement. */
  readonly size: number;
}

/** How a loop's ids are checked, bound, stored and read back. */
export interface IdCodec {
  readonly type: LoopIdType;
  /** `int`, `bigint` or `string(N)`: how the registry records the type. */
  readonly label: string;
  /** The column type in the loop table. */
  readonly columnSql: string;
  /** The placeholder for one id (bigints bind as decimal text, converted exactly by the server). */
  readonly placeholder: string;
  /** Reads column `col` so that `decode` gets it exactly (bigints as text). */
  select(col: string): string;
  /** Checks one id; MUST reject anything the column would truncate or coerce, naming the id. */
  encode(value: unknown, what: string): EncodedId;
  /** The id from what the driver returned. */
  decode(raw: unknown): LoopId;
  /** Primary-key order: the order rows are locked in, so overlapping batches wait rather than deadlock. */
  compare(a: EncodedId, b: EncodedId): number;
}

/** Checks an `idType` option, naming it when it is not one of the three forms. */
export function parseIdType(value: unknown): LoopIdType {
  if (value === 'int' || value === 'bigint') return value;
  if (typeof value === 'object' && value !== null && Object.keys(value).length === 1 && 'string' in value) {
    const n = (value as { string: unknown }).string;
    if (typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= MAX_LOOP_ID_BYTES) return { string: n };
    throw invalid(`idType { string: maxLength } needs maxLength to be an integer from 1 to ${MAX_LOOP_ID_BYTES} (UTF-8 bytes), got ${show(n)}`);
  }
  throw invalid(`idType must be 'int', 'bigint' or { string: maxLength }, got ${describeType(value)}`);
}

/** The registry's text for an id type: `int`, `bigint`, `string(64)`. */
export function idTypeLabel(type: LoopIdType): string {
  return typeof type === 'string' ? type : `string(${type.string})`;
}

/** Reads the registry's text back; MUST reject anything else (a hand-edited registry). */
export function idTypeFromLabel(label: string): LoopIdType {
  if (label === 'int' || label === 'bigint') return label;
  const m = /^string\((\d{1,4})\)$/.exec(label);
  if (m) return parseIdType({ string: Number(m[1]) });
  throw invalid(`the loop registry records an unknown id type ${JSON.stringify(label)}`);
}

/** True when two id types are the same. */
export function sameIdType(a: LoopIdType, b: LoopIdType): boolean {
  return idTypeLabel(a) === idTypeLabel(b);
}

function describeType(value: unknown): string {
  if (typeof value === 'object' && value !== null) return JSON.stringify(value) ?? 'object';
  return show(value);
}

const intCodec: IdCodec = {
  type: 'int',
  label: 'int',
  columnSql: 'INT NOT NULL',
  placeholder: '?',
  select: (col) => col,
  encode(value, what) {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < INT_MIN || value > INT_MAX) {
      throw invalid(`${what} ${show(value)} is not an id of this loop: its ids are integers from ${INT_MIN} to ${INT_MAX}`);
    }
    return { id: value, param: value, key: String(value), size: 12 };
  },
  decode: (raw) => Number(raw),
  compare: (a, b) => (a.id as number) - (b.id as number),
};

const bigintCodec: IdCodec = {
  type: 'bigint',
  label: 'bigint',
  columnSql: 'BIGINT NOT NULL',
  placeholder: 'CAST(? AS SIGNED)',
  select: (col) => `CAST(${col} AS CHAR)`,
  encode(value, what) {
    let n: bigint | undefined;
    if (typeof value === 'bigint') n = value;
    else if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
    if (n === undefined || n < BIGINT_MIN || n > BIGINT_MAX) {
      throw invalid(`${what} ${show(value)} is not an id of this loop: its ids are bigints (or safe-integer numbers) from ${BIGINT_MIN} to ${BIGINT_MAX}`);
    }
    const text = n.toString();
    return { id: n, param: text, key: text, size: text.length + 20 };
  },
  decode: (raw) => BigInt(String(raw)),
  compare: (a, b) => ((a.id as bigint) < (b.id as bigint) ? -1 : (a.id as bigint) > (b.id as bigint) ? 1 : 0),
};

function stringCodec(maxBytes: number): IdCodec {
  return {
    type: { string: maxBytes },
    label: `string(${maxBytes})`,
    columnSql: `VARBINARY(${maxBytes}) NOT NULL`,
    placeholder: '?',
    select: (col) => col,
    encode(value, what) {
      if (typeof value !== 'string' || value.length === 0) {
        throw invalid(`${what} ${show(value)} is not an id of this loop: its ids are non-empty strings of at most ${maxBytes} UTF-8 bytes`);
      }
      if (!(value as string & { isWellFormed(): boolean }).isWellFormed()) {
        throw invalid(`${what} ${show(value)} contains a lone surrogate and cannot be stored exactly`);
      }
      const bytes = Buffer.from(value, 'utf8');
      if (bytes.length > maxBytes) {
        throw invalid(`${what} ${show(value)} is ${bytes.length} UTF-8 bytes; this loop's ids are at most ${maxBytes} bytes`);
      }
      return { id: value, param: bytes, key: value, size: bytes.length * 2 + 8 };
    },
    decode: (raw) => (Buffer.isBuffer(raw) ? raw.toString('utf8') : String(raw)),
    compare: (a, b) => Buffer.compare(a.param as Buffer, b.param as Buffer),
  };
}

/** The codec of an id type (already checked by `parseIdType`). */
export function idCodec(type: LoopIdType): IdCodec {
  if (type === 'int') return intCodec;
  if (type === 'bigint') return bigintCodec;
  return stringCodec(type.string);
}

/** The ids of one call, read once (an iterable may be a one-shot generator). */
export interface IdBatch {
  readonly items: readonly unknown[];
  /** One id was passed rather than an iterable (messages then say "id", not "id #3"). */
  readonly single: boolean;
}

/** Reads one id or an iterable of ids; a bare string is one id, not its characters. */
export function idBatch(ids: unknown): IdBatch {
  const iterable = typeof ids === 'object' && ids !== null && Symbol.iterator in ids && !Buffer.isBuffer(ids);
  return iterable ? { items: [...(ids as Iterable<unknown>)], single: false } : { items: [ids], single: true };
}

/**
 * Validates every id of a batch, drops duplicates and sorts the rest in primary-key order. MUST
 * check every id before returning, so one bad id anywhere rejects the whole call.
 */
export function encodeBatch(codec: IdCodec, batch: IdBatch): EncodedId[] {
  const seen = new Map<string, EncodedId>();
  batch.items.forEach((value, i) => {
    const e = codec.encode(value, batch.single ? 'id' : `id #${i}`);
    if (!seen.has(e.key)) seen.set(e.key, e);
  });
  return [...seen.values()].sort((a, b) => codec.compare(a, b));
}
