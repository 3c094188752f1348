import { expect } from 'vitest';
import { TaskrowError } from '@taskrow/core';

/** Runs `f` (sync or async) and checks it raised an INVALID_CLIENT TaskrowError whose message matches `says`. */
export async function invalidClient(f: () => unknown, says: RegExp): Promise<void> {
  let err: unknown;
  try {
    await f();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(TaskrowError);
  expect((err as TaskrowError).code).toBe('INVALID_CLIENT');
  expect((err as TaskrowError).message).toMatch(says);
}

/** Values that are no client of any layer. */
export const NOT_CLIENTS: readonly unknown[] = [null, undefined, 42, 'mysql://u:p@h/db', {}, () => undefined];

/** Runs `f` and checks it raised a TaskrowError with `code`. */
export function throwsCode(f: () => unknown, code: string): void {
  let err: unknown;
  try {
    f();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(TaskrowError);
  expect((err as TaskrowError).code).toBe(code);
}
