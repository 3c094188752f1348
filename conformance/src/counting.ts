import type { SqlClient } from '@taskrow/core';

/**
 * A client that counts the statements it sends (BEGIN, the isolation level and COMMIT included),
 * except the doorbell's rings (READ UNCOMMITTED transactions that an enqueue starts unawaited, see
 * the core README's worker section), which `rings()` counts; `matching(re)` counts those whose
 * text matches `re`, `sent()` lists their texts and `bound()` how many values each was sent with,
 * since the client was made.
 */
export function counting(inner: SqlClient): {
  client: SqlClient;
  statements: () => number;
  rings: () => number;
  matching: (re: RegExp) => number;
  sent: () => readonly string[];
  bound: () => readonly number[];
} {
  let n = 0;
  let rings = 0;
  const sent: string[] = [];
  const bound: number[] = [];
  const note = (sql: string, params: readonly unknown[] | undefined): void => {
    n += 1;
    sent.push(sql);
    bound.push(params?.length ?? 0);
  };
  const client: SqlClient = {
    adapter: inner.adapter,
    joined: false,
    describeError: (err) => inner.describeError(err),
    query: (sql, params) => (note(sql, params), inner.query(sql, params)),
    transaction: (fn, options) => {
      if (options?.isolation === 'READ UNCOMMITTED') {
        rings += 1;
        return inner.transaction(fn, options);
      }
      n += options?.isolation ? 3 : 2;
      return inner.transaction((conn) => fn({ query: (sql, params) => (note(sql, params), conn.query(sql, params)) }), options);
    },
  };
  return { client, statements: () => n, rings: () => rings, matching: (re) => sent.filter((sql) => re.test(sql)).length, sent: () => [...sent], bound: () => [...bound] };
}
