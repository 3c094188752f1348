/** Limits for one statement: placeholders (prepared statements stop at 65,535) and bytes. */
export interface ChunkLimits {
  readonly maxRows: number;
  readonly maxBytes: number;
}

/** The byte budget for one statement: a quarter of max_allowed_packet, at most 4 MiB. */
export function statementBytes(maxAllowedPacket: number): number {
  return Math.max(64 * 1024, Math.min(4 * 1024 * 1024, Math.floor(maxAllowedPacket / 4)));
}

/**
 * Splits `items` into consecutive chunks of at most `maxRows` items and at most `maxBytes` bytes
 * (as measured by `size`); an item larger than `maxBytes` gets a chunk of its own. Keeps order.
 */
export function* chunks<T>(items: readonly T[], limits: ChunkLimits, size: (item: T) => number): Generator<T[]> {
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const s = size(item);
    if (current.length > 0 && (current.length >= limits.maxRows || bytes + s > limits.maxBytes)) {
      yield current;
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += s;
  }
  if (current.length > 0) yield current;
}

/** Splits `items` into consecutive runs of at most `size` items, keeping order. */
export function slices<T>(items: readonly T[], size: number): T[][] {
  return [...chunks(items, { maxRows: size, maxBytes: Infinity }, () => 0)];
}

/** `(?, ?, ?), (?, ?, ?)`: `rows` groups of `width` placeholders. */
export function placeholderRows(rows: number, width: number, inner = Array(width).fill('?').join(', ')): string {
  return Array(rows).fill(`(${inner})`).join(', ');
}

/** `?, ?, ?`: a list of `n` placeholders for `IN (...)`. */
export function placeholderList(n: number): string {
  return Array(n).fill('?').join(', ');
}
