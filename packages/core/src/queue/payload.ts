import { invalid } from '../errors.js';

/** The largest payload, in UTF-8 bytes of its JSON text: 1 MiB. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

/** The deepest nesting of arrays and objects a payload may have (MySQL's own JSON limit). */
export const MAX_PAYLOAD_DEPTH = 100;

/** Objects JSON.stringify turns into something else (`{}`, or numbered keys): refused by name. */
const LOSSY: readonly [string, (v: object) => boolean][] = [
  ['Map', (v) => v instanceof Map],
  ['Set', (v) => v instanceof Set],
  ['WeakMap', (v) => v instanceof WeakMap],
  ['WeakSet', (v) => v instanceof WeakSet],
  ['RegExp', (v) => v instanceof RegExp],
  ['Error', (v) => v instanceof Error],
  ['Promise', (v) => v instanceof Promise],
  ['ArrayBuffer', (v) => v instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && v instanceof SharedArrayBuffer)],
  ['typed array or Buffer', (v) => ArrayBuffer.isView(v)],
];

/** Why `value` cannot be stored as it is, or undefined when it can (its children are checked apart). */
function problem(value: unknown): string | undefined {
  switch (typeof value) {
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    case 'bigint':
      return `a BigInt (${value}n)`;
    case 'undefined':
      return 'undefined';
    case 'number':
      return Number.isFinite(value) ? undefined : `the number ${String(value)} (stored as null)`;
    case 'object': {
      if (value === null) return undefined;
      if (value instanceof Date && Number.isNaN(value.getTime())) return 'an invalid Date (stored as null)';
      const lossy = LOSSY.find(([, is]) => is(value));
      return lossy ? `a ${lossy[0] === 'typed array or Buffer' ? (value.constructor?.name ?? 'typed array') : lossy[0]} (it would not be stored as it is)` : undefined;
    }
    default:
      return undefined;
  }
}

/** One value still to check: where it is, how deep, and whether its children were pushed. */
interface Frame {
  readonly value: unknown;
  /** The key JSON.stringify passes to `toJSON` ('' at the top, the index as a string in arrays). */
  readonly key: string;
  readonly path: string;
  readonly depth: number;
  readonly leaving?: object;
}

/** The value JSON.stringify will write for `value`: what its `toJSON` returns, if it has one. */
function serialised(value: unknown, key: string, path: string): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON !== 'function') return value;
  try {
    return toJSON.call(value, key);
  } catch (err) {
    throw invalid(`not JSON-serialisable: ${path}.toJSON() threw: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Walks `value` the way JSON.stringify will, without recursion (any depth is walked safely), and
 * rejects what would not come back as it went in: functions, symbols, BigInt, NaN and infinities,
 * `undefined` at the top or in an array, array holes, invalid Dates, Map, Set, RegExp, Error,
 * ArrayBuffer, typed arrays and Buffers, `toJSON()` results that are any of these, cycles, and
 * nesting deeper than `MAX_PAYLOAD_DEPTH`. The error names the path and the value.
 */
function check(root: unknown, what: string): void {
  const stack: Frame[] = [{ value: root, key: '', path: what, depth: 0 }];
  const ancestors = new Set<object>();
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (f.leaving) {
      ancestors.delete(f.leaving);
      continue;
    }
    // A Buffer's own toJSON turns it into { type, data }: refused before toJSON runs.
    const value = problem(f.value) ? f.value : serialised(f.value, f.key, f.path);
    // JSON.stringify calls toJSON once: a Date returned by toJSON is written as {}.
    const bad = value !== f.value && value instanceof Date ? 'a Date (stored as {})' : problem(value);
    if (bad) throw invalid(`not JSON-serialisable: ${f.path}${value === f.value ? '' : '.toJSON()'} is ${bad}`);
    if (value === null || typeof value !== 'object' || value instanceof Date) continue;
    if (f.depth >= MAX_PAYLOAD_DEPTH) {
      const at = f.path.length > 120 ? `...${f.path.slice(-80)}` : f.path;
      throw invalid(`${what} is nested deeper than the limit of ${MAX_PAYLOAD_DEPTH} levels (at ${at})`);
    }
    if (ancestors.has(value)) throw invalid(`not JSON-serialisable: ${f.path} refers back to itself (a cycle)`);
    ancestors.add(value);
    stack.push({ value: undefined, key: '', path: f.path, depth: f.depth, leaving: value });
    pushChildren(stack, value, f);
  }
}

function pushChildren(stack: Frame[], value: object, f: Frame): void {
  if (Array.isArray(value)) {
    for (let i = value.length - 1; i >= 0; i--) {
      if (!(i in value)) throw invalid(`not JSON-serialisable: ${f.path}[${i}] is a hole in the array (stored as null)`);
      stack.push({ value: value[i], key: String(i), path: `${f.path}[${i}]`, depth: f.depth + 1 });
    }
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    if (v !== undefined) stack.push({ value: v, key: k, path: `${f.path}.${k}`, depth: f.depth + 1 });
  }
}

/**
 * Encodes a payload as JSON text. MUST reject, before any SQL runs, a payload that would not
 * round-trip (see `check`) or whose JSON is over `MAX_PAYLOAD_BYTES`, naming the problem.
 */
export function encodePayload(value: unknown, what = 'payload'): string {
  if (value === undefined) throw invalid(`${what} is undefined; pass null or a JSON value`);
  check(value, what);
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw invalid(`${what} is not JSON-serialisable: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (text === undefined) throw invalid(`${what} is not JSON-serialisable`);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_PAYLOAD_BYTES) throw invalid(`${what} is ${bytes} bytes as JSON; the limit is ${MAX_PAYLOAD_BYTES} bytes`);
  return text;
}

/** Parses a stored payload. */
export function decodePayload<P>(text: unknown): P {
  const s = Buffer.isBuffer(text) ? text.toString('utf8') : String(text);
  return JSON.parse(s) as P;
}
