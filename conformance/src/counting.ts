import type { SqlClient } from '@taskrow/core';

/**
 * A client that counts the statements it sends (BEGIN, the isolation level and COMMIT included),
 * except the doorbell's rings (READ UNCOMMITTED transactions that an enqueue starts unawaited, see
 * the core README's worker section), which `rings()` counts; `matching(re)` counts those whose
 * text matches `re`, and `sent()` lists their texts, since the client was made.
 */
export function counting(inner: SqlClient): {
  client: SqlClient;
  statements: () => number;
  rings: () => number;
  matching: (re: RegExp) => number;
  sent: () => readonly string[];
} {
  let n = 0;
  let rings = 0;
  const sent: string[] = [];
  const note = (sql: string): void => {
    n += 1;
    sent.push(sql);
  };
  const client: SqlClient = {
    adapter: inner.adapter,
    joined: false,
    describeError: (err) => inner.describeError(err),
    query: (sql, params) => (note(sql), inner.query(sql, params)),
    transaction: (fn, options) => {
      if (options?.isolation === 'READ UNCOMMITTED') {
        rings += 1;
        return inner.transaction(fn, options);
      }
      n += options?.isolation ? 3 : 2;
      return inner.transaction((conn) => fn({ query: (sql, params) => (note(sql), conn.query(sql, params)) }), options);
    },
  };
  return { client, statements: () => n, rings: () => rings, matching: (re) => sent.filter((sql) => re.test(sql)).length, sent: () => [...sent] };
}
