/** Exit codes, documented in the README: 0 ok, 1 error, 2 usage. */
export const EXIT_OK = 0;
export const EXIT_ERROR = 1;
export const EXIT_USAGE = 2;

/** A command line that cannot be run as given: usage is printed and the exit code is 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
