import { InvalidArgumentError, invalid } from '../errors.js';
import { encodeKey, keyDigest } from '../keys.js';
import { show } from '../validate.js';

const NAME = Symbol('taskrow.dottedName');

/**
 * A dotted name under construction: every property or call appends a segment. Convert with
 * `String(x)`, `` `${x}` `` or `x.toString()`; taskrow's Resources accept it wherever a key goes.
 * The property names `toString`, `valueOf`, `toJSON` and `then` are not segments (call form:
 * `x('then')`).
 */
export type DottedName = {
  readonly [segment: string]: DottedName;
} & {
  (segment: string | number): DottedName;
  toString(): string;
  valueOf(): string;
  toJSON(): string;
  readonly [NAME]: string;
};

function build(path: string): DottedName {
  const target = function dottedName(): void {} as unknown as object;
  return new Proxy(target, {
    get(_t, prop) {
      if (prop === NAME) return path;
      if (prop === Symbol.toPrimitive || prop === 'toString' || prop === 'valueOf' || prop === 'toJSON') return () => path;
      if (typeof prop === 'symbol' || prop === 'then') return undefined;
      return build(join(path, prop));
    },
    apply(_t, _this, args: unknown[]) {
      const seg = args[0];
      if (typeof seg !== 'string' && typeof seg !== 'number') throw invalid(`a dotted name segment must be a string or number, got ${show(seg)}`);
      return build(join(path, String(seg)));
    },
  }) as DottedName;
}

function join(path: string, segment: string): string {
  return path === '' ? segment : `${path}.${segment}`;
}

/**
 * Builds dotted names like jobs.py's `NG`: `dotted.reporting.byPartner['2024-01-01']` is
 * `reporting.byPartner.2024-01-01`. Segments are taken as given (no trimming).
 */
export const dotted: DottedName = build('');

/** The typed equivalent of `dotted`: `dottedName('reporting', 'byPartner', day)`. */
export function dottedName(...segments: (string | number)[]): string {
  if (segments.length === 0) throw invalid('dottedName() needs at least one segment');
  for (const s of segments) {
    if (typeof s !== 'string' && typeof s !== 'number') throw invalid(`a dotted name segment must be a string or number, got ${show(s)}`);
  }
  return segments.map(String).join('.');
}

function isDotted(value: unknown): value is DottedName {
  return typeof value === 'function' && typeof (value as { [NAME]?: unknown })[NAME] === 'string';
}

/** A validated resource key or job name: the exact string, its UTF-8 bytes and its 16-byte digest. */
export interface ResKey {
  readonly key: string;
  readonly bytes: Buffer;
  readonly h: Buffer;
  /** `h` as a binary string, for maps and sets. */
  readonly id: string;
}

/** Validates one key (same rules as Dones keys; a `DottedName` is taken as its string). */
export function resKey(value: unknown, what: string): ResKey {
  const raw = isDotted(value) ? value[NAME] : value;
  const e = encodeKey(raw, what);
  const h = keyDigest(e.bytes);
  return { key: e.key, bytes: e.bytes, h, id: h.toString('binary') };
}

/** Validates one key or an iterable of keys, all before anything runs; drops repeats (first wins). */
export function resKeys(values: unknown, what: string): ResKey[] {
  if (typeof values === 'string' || isDotted(values)) return [resKey(values, what)];
  if (values === null || typeof values !== 'object' || !(Symbol.iterator in values)) {
    throw new InvalidArgumentError('INVALID_KEY', `expected ${what} keys as a key or an iterable of keys, got ${show(values)}`);
  }
  const out: ResKey[] = [];
  const seen = new Set<string>();
  let i = 0;
  for (const v of values as Iterable<unknown>) {
    const k = resKey(v, `${what} #${i++}`);
    if (seen.has(k.id)) continue;
    seen.add(k.id);
    out.push(k);
  }
  return out;
}

/** Ascending digest order: the one order every transaction locks key rows in. */
export const byDigest = (a: ResKey, b: ResKey): number => Buffer.compare(a.h, b.h);
