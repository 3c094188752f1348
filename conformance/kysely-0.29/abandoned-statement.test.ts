import { Kysely } from 'kysely-0.29';
import type { Taskrow } from '@taskrow/core';
import { kyselyClient, taskrow } from '@taskrow/kysely';
import { describeAbandonedStatement, options, POOL_SIZE } from '../src/abandoned-statement.js';
import { kyselyFor } from '../src/harnesses/kysely.js';
import { startingAt } from '../src/harnesses/shared.js';
import { targets } from '../src/targets.js';

// Kysely 0.29 gives a statement up with its own 'kill session' strategy: the same cases as the
// other adapters (src/abandoned-statement.ts), on the server the project's kit runs on.
describeAbandonedStatement(
  {
    async 'kysely-0.29'(target, prefix) {
      const { db } = kyselyFor(target.url, POOL_SIZE);
      if (!(db instanceof Kysely)) throw new Error('this project must resolve `kysely` to Kysely 0.29');
      return { tr: (await taskrow(db, options(prefix))) as Taskrow<unknown>, client: kyselyClient(db), end: () => db.destroy() };
    },
  },
  [startingAt(targets(), 1)[0]!],
);
