import { TaskrowError } from '@taskrow/core';

/** One rewrite of a core message: core names library calls, the CLI names its own commands and flags. */
interface Rewrite {
  readonly code: string;
  readonly from: RegExp;
  readonly to: (match: string, ...groups: string[]) => string;
}

/** A job option as the library names it, to the flag that sets it. */
const JOB_OPTION_FLAGS: Readonly<Record<string, string>> = {
  delay: '--delay',
  priority: '--priority',
  maxAttempts: '--max-attempts',
  dedupKey: '--dedup-key',
  concurrencyKey: '--concurrency-key',
  payload: 'payload',
};

/** A job's option in a library message (`enqueueMany() jobs[3] priority`, `schedules.upsert() job delay`), to its flag. */
const jobOption = (code: string): Rewrite => ({
  code,
  from: /^(?:enqueueMany\(\) jobs\[\d+\]|schedules\.upsert\(\) job) (delay|priority|maxAttempts|dedupKey|concurrencyKey|payload)\b/,
  to: (_, option) => JOB_OPTION_FLAGS[option] ?? option,
});

const REWRITES: readonly Rewrite[] = [
  jobOption('INVALID_ARGUMENT'),
  jobOption('INVALID_KEY'),
  {
    code: 'INVALID_NAME',
    from: /^invalid group /,
    to: () => 'invalid --group ',
  },
  {
    code: 'INVALID_ARGUMENT',
    from: /^schedules\.upsert\(\)( job)?/,
    to: () => 'schedule add',
  },
  {
    code: 'SCHEMA_MISSING',
    from: /run taskrow\.migrate\(\) first \(or apply taskrow\.schemaSql\(\)\)/,
    to: () => 'run taskrow migrate first (or apply the DDL that taskrow schema prints)',
  },
  {
    code: 'NOT_FOUND',
    from: /create it with taskrow\.createLoop\("([^"\\]*)", \{ idType \}\)/,
    to: (_, loop) => `create it with taskrow loop create ${loop} [--id-type int|bigint|string:N]`,
  },
  {
    code: 'NOT_FOUND',
    from: /^loop "([^"\\]*)"(.*): run taskrow\.createLoop\(\) again$/,
    to: (_, loop, middle) => `loop "${loop}"${middle}: run taskrow loop create ${loop} again`,
  },
  {
    code: 'INVALID_ARGUMENT',
    from: /^list\(\) after must be (?:a cursor returned as next|the next value of an earlier list\(\) page)/,
    to: () => '--after must be the cursor an earlier page printed as next',
  },
];

/**
 * The message the CLI prints for an error: a TaskrowError's text with library calls replaced by
 * the CLI commands that do the same (matched by error code first), then ` [CODE]`. Other errors
 * keep their message.
 */
export function cliMessage(err: unknown): string {
  if (!(err instanceof TaskrowError)) return (err as Error)?.message ?? String(err);
  let text = err.message;
  for (const r of REWRITES) if (r.code === err.code) text = text.replace(r.from, r.to);
  return `${text} [${err.code}]`;
}
