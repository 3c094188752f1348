import { invalid } from '../errors.js';

/** The largest payload, in UTF-8 bytes of its JSON text: 1 MiB. */
export const MAX_PAYLOAD_BYTES = 1024 * 1024;

/** What JSON.stringify would silently turn into something else (or drop), named for the error. */
function badValue(value: unknown): string | undefined {
  switch (typeof value) {
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    case 'bigint':
      return 'a BigInt';
    case 'number':
      return Number.isFinite(value) ? undefined : `the number ${String(value)}`;
    default:
      return undefined;
  }
}

/**
 * Walks `value` the way JSON.stringify will and rejects what would not round-trip: functions,
 * symbols, BigInt, NaN and infinities anywhere, `undefined` at the top level or in an array,
 * Map and Set (they serialise as `{}`), and cycles. `path` names the place for the message.
 */
function check(value: unknown, path: string, stack: Set<object>): void {
  const bad = badValue(value);
  if (bad) throw invalid(`not JSON-serialisable: ${path} is ${bad}`);
  if (value === null || typeof value !== 'object') return;
  const obj = value as Record<string, unknown> & { toJSON?: unknown };
  if (typeof obj.toJSON === 'function') return; // Date and friends serialise themselves
  if (value instanceof Map || value instanceof Set) {
    throw invalid(`not JSON-serialisable: ${path} is a ${value instanceof Map ? 'Map' : 'Set'} (it would be stored as {})`);
  }
  if (stack.has(value)) throw invalid(`not JSON-serialisable: ${path} refers back to itself (a cycle)`);
  stack.add(value);
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      if (v === undefined) throw invalid(`not JSON-serialisable: ${path}[${i}] is undefined (it would be stored as null)`);
      check(v, `${path}[${i}]`, stack);
    });
  } else {
    for (const [k, v] of Object.entries(obj)) if (v !== undefined) check(v, `${path}.${k}`, stack);
  }
  stack.delete(value);
}

/**
 * Encodes a payload as JSON text. MUST reject, before any SQL runs, a payload that is not
 * JSON-serialisable (see `check`) or whose JSON is over `MAX_PAYLOAD_BYTES`, naming the problem.
 */
export function encodePayload(value: unknown, what = 'payload'): string {
  if (value === undefined) throw invalid(`${what} is undefined; pass null or a JSON value`);
  check(value, what, new Set());
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
