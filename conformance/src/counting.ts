import type { SqlClient } from '@taskrow/core';

/** A client that counts the statements it sends (BEGIN, the isolation level and COMMIT included). */
export function counting(inner: SqlClient): { client: SqlClient; statements: () => number } {
  let n = 0;
  const client: SqlClient = {
    adapter: inner.adapter,
    joined: false,
    describeError: (err) => inner.describeError(err),
    query: (sql, params) => ((n += 1), inner.query(sql, params)),
    transaction: (fn, options) => {
      n += options?.isolation ? 3 : 2;
      return inner.transaction((conn) => fn({ query: (sql, params) => ((n += 1), conn.query(sql, params)) }), options);
    },
  };
  return { client, statements: () => n };
}
