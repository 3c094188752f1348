import type { SqlClient, SqlConnection } from './port.js';

/**
 * Wraps a client that sits on ONE connection (a single driver connection the application passed)
 * so that taskrow's own transactions and statements take turns: without it, two concurrent calls
 * would interleave BEGIN / COMMIT on the same connection. A joined client needs no wrapping.
 */
export function serialClient(client: SqlClient): SqlClient {
  let tail: Promise<unknown> = Promise.resolve();
  const turn = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
  return {
    adapter: client.adapter,
    joined: client.joined,
    endsInterrupted: client.endsInterrupted,
    describeError: (err) => client.describeError(err),
    query: (sql, params) => turn(() => client.query(sql, params)),
    transaction: (fn, options) => turn(() => client.transaction((conn: SqlConnection) => fn(conn), options)),
  };
}
