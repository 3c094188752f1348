import type { Knex } from 'knex';
import type { Taskrow } from '@taskrow/core';
import { taskrow as drizzleTaskrow } from '@taskrow/drizzle';
import { taskrow as knexTaskrow } from '@taskrow/knex';
import { taskrow as sequelizeTaskrow } from '@taskrow/sequelize';
import { taskrow as typeormTaskrow } from '@taskrow/typeorm';
import { drizzleFor, endDrizzle } from '../../src/harnesses/drizzle.js';
import { knexFor } from '../../src/harnesses/knex.js';
import { sequelizeFor } from '../../src/harnesses/sequelize.js';
import { typeormFor } from '../../src/harnesses/typeorm.js';
import { describeLentAbort, STATEMENT_TIMEOUT, type OpenAdapter } from '../../src/lent-abort.js';

// The library adapters over a pool of one connection each, on a silent socket (src/lent-abort.ts).
// Kysely's case runs in the kysely-0.29 project: Kysely 0.28 cannot abort a statement.
const adapters: Record<string, OpenAdapter> = {
  async knex(url, prefix) {
    const db: Knex = knexFor(url, 1);
    const tr = (await knexTaskrow(db, { prefix, statementTimeout: STATEMENT_TIMEOUT })) as Taskrow<unknown>;
    return { tr, end: () => db.destroy() };
  },
  async drizzle(url, prefix) {
    const db = drizzleFor(url, 1);
    const tr = (await drizzleTaskrow(db, { prefix, statementTimeout: STATEMENT_TIMEOUT })) as Taskrow<unknown>;
    return { tr, end: () => endDrizzle(db).catch(() => undefined) };
  },
  async typeorm(url, prefix) {
    const ds = await typeormFor(url, 1);
    const tr = (await typeormTaskrow(ds, { prefix, statementTimeout: STATEMENT_TIMEOUT })) as Taskrow<unknown>;
    return { tr, end: () => ds.destroy().catch(() => undefined) };
  },
  async sequelize(url, prefix) {
    const db = sequelizeFor(url, 1);
    const tr = (await sequelizeTaskrow(db, { prefix, statementTimeout: STATEMENT_TIMEOUT })) as Taskrow<unknown>;
    return { tr, end: () => db.close().catch(() => undefined) };
  },
};

describeLentAbort(adapters);
