import { expect } from 'vitest';
import { TaskrowError, type TaskrowErrorCode } from '../errors.js';

/**
 * Awaits `p` (or calls it, so a synchronous throw counts too), expects it to fail with a
 * `TaskrowError` (with `code`, when given), and returns the error for further checks.
 */
export async function rejection<E extends TaskrowError = TaskrowError>(p: Promise<unknown> | (() => unknown), code?: TaskrowErrorCode): Promise<E> {
  let err: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(TaskrowError);
  if (code) expect((err as TaskrowError).code, (err as Error).message).toBe(code);
  return err as E;
}

/** One line for an error: its name, code and errno when it has them, and its message. */
function errorLine(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const t = e as Error & { code?: unknown; errno?: unknown };
  const tags = [t.code, t.errno].filter((x) => x !== undefined && x !== null).join(' ');
  return `${e.name}${tags ? ` [${tags}]` : ''}: ${e.message}`.slice(0, 160);
}

/**
 * Expects `list` to be empty. When it is not, the failure's first line names how many there are and
 * the most frequent distinct entries (`line` renders one; errors by default get name, code, errno and
 * message), so a failure in a long run says what went wrong, not only that something did.
 */
export function expectNone<T>(what: string, list: readonly T[], line: (x: T) => string = errorLine): void {
  const counts = new Map<string, number>();
  for (const x of list) counts.set(line(x), (counts.get(line(x)) ?? 0) + 1);
  const top = [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([l, n]) => `${n}x ${l}`);
  expect(list, `${list.length} ${what}${top.length > 0 ? `; ${top.join('; ')}` : ''}`).toEqual([]);
}
