import type { SqlClient } from '@taskrow/core';

/**
 * A client that counts the statements it sends (BEGIN, the isolation level and COMMIT included),
 * with `calls` through its sessions too and calling procedures as `inner` does (else it calls none),
 * except the doorbell's rings (READ UNCOMMITTED transactions that an enqueue starts unawaited, see
 * the core README's worker section), which `rings()` counts; `matching(re)` counts those whose
 * text matches `re`, `sent()` lists their texts and `bound()` how many values each was sent with,
 * since the client was made.
 */
export function counting(
  inner: SqlClient,
  options: { readonly calls?: boolean } = {},
): {
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
  const counted = (c: SqlClient): SqlClient => ({
    adapter: c.adapter,
    joined: false,
    describeError: (err) => c.describeError(err),
    query: (sql, params, o) => (note(sql, params), c.query(sql, params, o)),
    transaction: (fn, o) => {
      if (o?.isolation === 'READ UNCOMMITTED') {
        rings += 1;
        return c.transaction(fn, o);
      }
      n += o?.isolation ? 3 : 2;
      return c.transaction((conn) => fn({ query: (sql, params) => (note(sql, params), conn.query(sql, params)) }), o);
    },
  });
  // With `calls`, the client may CALL procedures (it says it ends interrupted statements' transactions,
  // as `inner` does) and keeps sessions, whose statements are counted too.
  const session = inner.session;
  const client: SqlClient =
    options.calls === true
      ? {
          ...counted(inner),
          ...(inner.endsInterrupted === undefined ? {} : { endsInterrupted: inner.endsInterrupted }),
          ...(session === undefined
            ? {}
            : {
                session: (o) => {
                  const kept = session.call(inner, o);
                  return { ...counted(kept), end: () => kept.end() };
                },
              }),
        }
      : counted(inner);
  return {
    client,
    statements: () => n,
    rings: () => rings,
    matching: (re) => sent.filter((sql) => re.test(sql)).length,
    sent: () => [...sent],
    bound: () => [...bound],
  };
}
