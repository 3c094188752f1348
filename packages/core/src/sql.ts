/**
 * SQL fragments every primitive shares. Times are stored as UTC `DATETIME(6)` and compared and
 * returned as whole microseconds since the epoch, independent of the session time zone.
 */

/** `column` (a UTC `DATETIME(6)`) as microseconds since the epoch. */
export const epochMicros = (column: string): string => `TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ${column})`;

/** The database clock as microseconds since the epoch. */
export const NOW_MICROS = epochMicros('UTC_TIMESTAMP(6)');

/** A UTC `DATETIME(6)` from `us`, SQL for microseconds since the epoch (a `?`, or a routine's variable). */
export const fromMicros = (us: string): string => `('1970-01-01 00:00:00' + INTERVAL ${us} MICROSECOND)`;

/** A UTC `DATETIME(6)` from a `?` bound to microseconds since the epoch. */
export const FROM_MICROS = fromMicros('?');

/**
 * `bytes` as an SQL hex literal (`X'6a6f62'`), for statements that carry thousands of binary
 * values: the text is what a driver's escaping of a Buffer produces, built without a placeholder
 * per value for the driver to find and escape. Only hex digits reach the text, so no value can
 * change the statement.
 */
export const binaryLiteral = (bytes: Buffer): string => `X'${bytes.toString('hex')}'`;

/** `values` as a comma-separated list of hex literals (see `binaryLiteral`). */
export const binaryList = (values: readonly Buffer[]): string => values.map(binaryLiteral).join(', ');
/** Bytes a value of `length` bytes adds to a `binaryList`: its hex literal and a separator. */
export const binaryListedLength = (length: number): number => length * 2 + 5;
/** Bytes one value adds to a `binaryList` (see `binaryListedLength`). */
export const binaryListedBytes = (bytes: Buffer): number => binaryListedLength(bytes.length);
