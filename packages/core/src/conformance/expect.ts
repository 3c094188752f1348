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
