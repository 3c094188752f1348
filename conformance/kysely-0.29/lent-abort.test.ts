import { Kysely } from 'kysely-0.29';
import type { Taskrow } from '@taskrow/core';
import { taskrow } from '@taskrow/kysely';
import { kyselyFor } from '../src/harnesses/kysely.js';
import { startingAt } from '../src/harnesses/shared.js';
import { describeLentAbort, STATEMENT_TIMEOUT } from '../src/lent-abort.js';
import { targets } from '../src/targets.js';

// Kysely 0.29 aborts a statement the engine gave up on (`'kill session'`: the pooled mysql2
// connection is destroyed, the server session KILLed), so its pool of one lends again: the same
// silent-socket cases as the other library adapters (src/lent-abort.ts), on the server the
// project's kit runs on.
describeLentAbort(
  {
    // Named `kysely-0.29` so the README matrix counts these with that row.
    async 'kysely-0.29'(url, prefix) {
      const { db } = kyselyFor(url, 1);
      if (!(db instanceof Kysely)) throw new Error('this project must resolve `kysely` to Kysely 0.29');
      const tr = (await taskrow(db, { prefix, statementTimeout: STATEMENT_TIMEOUT })) as Taskrow<unknown>;
      return { tr, end: () => db.destroy().catch(() => undefined) };
    },
  },
  [startingAt(targets(), 1)[0]!],
);
