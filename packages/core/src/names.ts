import { InvalidArgumentError } from './errors.js';
import { show } from './validate.js';

/** Table prefix: letters, digits and `_`, at most 24 characters (tables stay under MySQL's 64). */
export const PREFIX_PATTERN = /^[A-Za-z0-9_]{0,24}$/;
/** Namespace / loop / queue names: a letter or digit, then letters, digits and `_ . : -`, 1..64 characters. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
/** Names that become part of a table name (loops): lowercase letters, digits and `_`, 1..32. */
export const TABLE_NAME_PATTERN = /^[a-z0-9][a-z0-9_]{0,31}$/;

/**
 * Checks a name stored as a value (Dones namespace, queue name). MUST reject anything outside
 * `NAME_PATTERN`, naming the value and the rule; never trims or rewrites.
 */
export function validateName(kind: string, value: unknown): string {
  if (typeof value !== 'string' || !NAME_PATTERN.test(value)) {
    throw new InvalidArgumentError(
      'INVALID_NAME',
      `invalid ${kind} ${show(value)}: use 1 to 64 characters, a letter or digit first, then letters, digits, "_", ".", ":" or "-"`,
    );
  }
  return value;
}

/** Checks a name that becomes part of a table name. MUST reject anything outside `TABLE_NAME_PATTERN`. */
export function validateTableName(kind: string, value: unknown): string {
  if (typeof value !== 'string' || !TABLE_NAME_PATTERN.test(value)) {
    throw new InvalidArgumentError(
      'INVALID_NAME',
      `invalid ${kind} ${show(value)}: use 1 to 32 characters, a lowercase letter or digit first, then lowercase letters, digits or "_"`,
    );
  }
  return value;
}

/** Checks the table prefix option. */
export function validatePrefix(value: unknown): string {
  if (typeof value !== 'string' || !PREFIX_PATTERN.test(value)) {
    throw new InvalidArgumentError('INVALID_NAME', `invalid table prefix ${show(value)}: use 0 to 24 letters, digits or "_"`);
  }
  return value;
}

/** Backquotes an identifier that was validated by one of the functions above. */
export function ident(name: string): string {
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) throw new InvalidArgumentError('INVALID_NAME', `refusing to quote identifier ${show(name)}`);
  return `\`${name}\``;
}
