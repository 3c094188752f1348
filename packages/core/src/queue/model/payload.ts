import { invalid } from '../../errors.js';

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
      if (value === null || Array.isArray(value)) return undefined;
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto === Object.prototype || proto === null) return undefined;
      if (value instanceof Date && Number.isNaN(value.getTime())) return 'an invalid Date (stored as null)';
      const lossy = LOSSY.find(([, is]) => is(value));
      return lossy
        ? `a ${lossy[0] === 'typed array or Buffer' ? (value.constructor?.name ?? 'typed array') : lossy[0]} (it would not be stored as it is)`
        : undefined;
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
  /** Whether `key` is an array index. */
  readonly index: boolean;
  /** The frame of the object or array holding the value (none at the top). */
  readonly parent: Frame | undefined;
  readonly depth: number;
  readonly leaving?: object;
}

/** Where `f`'s value is, as `what.a[2].b`: made only for an error message. */
function pathOf(f: Frame, what: string): string {
  const parts: string[] = [];
  for (let p: Frame | undefined = f; p?.parent; p = p.parent) parts.push(p.index ? `[${p.key}]` : `.${p.key}`);
  return what + parts.reverse().join('');
}

/** The value JSON.stringify will write for `value`: what its `toJSON` returns, if it has one. */
function serialised(value: unknown, f: Frame, what: string): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON !== 'function') return value;
  try {
    return toJSON.call(value, f.key);
  } catch (err) {
    throw invalid(`not JSON-serialisable: ${pathOf(f, what)}.toJSON() threw: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** A value JSON.stringify writes as it is, with nothing inside to check. */
const settled = (v: unknown): boolean => typeof v === 'string' || typeof v === 'boolean' || v === null || (typeof v === 'number' && Number.isFinite(v));

/**
 * Walks `value` the way JSON.stringify will, without recursion (any depth is walked safely), and
 * rejects what would not come back as it went in: functions, symbols, BigInt, NaN and infinities,
 * `undefined` at the top or in an array, array holes, invalid Dates, Map, Set, RegExp, Error,
 * ArrayBuffer, typed arrays and Buffers, `toJSON()` results that are any of these, cycles, and
 * nesting deeper than `MAX_PAYLOAD_DEPTH`. The error names the path and the value.
 */
function check(root: unknown, what: string): void {
  if (flat(root)) return;
  const stack: Frame[] = [{ value: root, key: '', index: false, parent: undefined, depth: 0 }];
  const ancestors = new Set<object>();
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (f.leaving) {
      ancestors.delete(f.leaving);
      continue;
    }
    // A Buffer's own toJSON turns it into { type, data }: refused before toJSON runs.
    const first = problem(f.value);
    const value = first ? f.value : serialised(f.value, f, what);
    const fromToJSON = !Object.is(value, f.value);
    // JSON.stringify calls toJSON once: a Date returned by toJSON is written as {}.
    const bad = !fromToJSON ? first : value instanceof Date ? 'a Date (stored as {})' : problem(value);
    if (bad) throw invalid(`not JSON-serialisable: ${pathOf(f, what)}${fromToJSON ? '.toJSON()' : ''} is ${bad}`);
    if (value === null || typeof value !== 'object' || value instanceof Date) continue;
    if (f.depth >= MAX_PAYLOAD_DEPTH) {
      const path = pathOf(f, what);
      throw invalid(`${what} is nested deeper than the limit of ${MAX_PAYLOAD_DEPTH} levels (at ${path.length > 120 ? `...${path.slice(-80)}` : path})`);
    }
    if (ancestors.has(value)) throw invalid(`not JSON-serialisable: ${pathOf(f, what)} refers back to itself (a cycle)`);
    ancestors.add(value);
    stack.push({ value: undefined, key: '', index: false, parent: undefined, depth: f.depth, leaving: value });
    pushChildren(stack, value, f, what);
  }
}

/**
 * Whether `value` is settled, or a plain object (prototype `Object.prototype` or none) without a
 * `toJSON` whose own values are all settled or undefined: the most common payload, which
 * JSON.stringify writes as it is, so `check` has nothing more to look at.
 */
function flat(value: unknown): boolean {
  if (settled(value)) return true;
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  for (const k in value) {
    const v: unknown = (value as Record<string, unknown>)[k];
    if (v !== undefined && !settled(v)) return false;
  }
  return true;
}

/** Pushes the children of `value` (held by `f`) that need a look: strings, booleans, null and finite numbers do not. */
function pushChildren(stack: Frame[], value: object, f: Frame, what: string): void {
  const depth = f.depth + 1;
  if (Array.isArray(value)) {
    for (let i = value.length - 1; i >= 0; i--) {
      if (!(i in value)) throw invalid(`not JSON-serialisable: ${pathOf(f, what)}[${i}] is a hole in the array (stored as null)`);
      const v: unknown = value[i];
      if (!settled(v)) stack.push({ value: v, key: String(i), index: true, parent: f, depth });
    }
    return;
  }
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    const v: unknown = (value as Record<string, unknown>)[k];
    if (v !== undefined && !settled(v)) stack.push({ value: v, key: k, index: false, parent: f, depth });
  }
}

/**
 * Encodes a payload as JSON text. MUST reject, before any SQL runs, a payload that would not
 * round-trip (see `check`) or whose JSON is over `MAX_PAYLOAD_BYTES`, naming the problem.
 */
export function encodePayload(value: unknown, what = 'payload'): string {
  return encodePayloadSized(value, what).text;
}

/** `encodePayload`, with the text's length in UTF-8 bytes (measured once, for the limit). */
export function encodePayloadSized(value: unknown, what = 'payload'): { text: string; bytes: number } {
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
  return { text, bytes };
}

/** Parses a stored payload. */
export function decodePayload<P>(text: unknown): P {
  const s = Buffer.isBuffer(text) ? text.toString('utf8') : String(text);
  return JSON.parse(s) as P;
}
