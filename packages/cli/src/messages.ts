import { TaskrowError } from '@taskrow/core';

/** One rewrite of a core message: core names library calls, the CLI names its own commands and flags. */
interface Rewrite {
  readonly code: string;
  readonly from: RegExp;
  readonly to: (match: string, ...groups: string[]) => string;
}

const REWRITES: readonly Rewrite[] = [
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
