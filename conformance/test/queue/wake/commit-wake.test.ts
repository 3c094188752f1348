import { afterAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import type { Sequelize } from 'sequelize';
import type { Taskrow } from '@taskrow/core';
import { dropPrefix, until } from '@taskrow/core/conformance';
import { taskrow as knexTaskrow } from '@taskrow/knex';
import { taskrow as sequelizeTaskrow } from '@taskrow/sequelize';
import { inKnexTransaction, knexFor } from '../../../src/harnesses/knex.js';
import { mysql2Probe } from '../../../src/harnesses/mysql2.js';
import { inSequelizeTransaction, sequelizeFor } from '../../../src/harnesses/sequelize.js';
import { label, targets } from '../../../src/targets.js';

// An enqueue inside the application's transaction (`tr.in(tx)`) wakes this process's idle workers
// when that transaction commits, through adapters that see the commit (Knex, Sequelize: see
// `SqlClient.afterCommit`). The hook lives in the adapter, not the server: the first server does.

/** The longest wait between a worker's polls here: far longer than the test. */
const POLL_INTERVAL = 60_000;
/**
 * An observation window, not a wait for the database: idle this long, the worker's waits between
 * polls (10 ms, 20 ms, ... doubling) have reached the one that runs from about 5.1 s to 10.2 s,
 * so a job found within a second of the commit was not found by a poll.
 */
const IDLE_WINDOW_MS = 5500;

interface Opened {
  readonly tr: Taskrow<unknown>;
  /** Runs `fn` in the application's transaction and commits it. */
  committed(fn: (tx: unknown) => Promise<unknown>): Promise<unknown>;
  end(): Promise<void>;
}

const adapters: Record<string, (url: string, prefix: string) => Promise<Opened>> = {
  async knex(url, prefix) {
    const db: Knex = knexFor(url, 4);
    const tr = (await knexTaskrow(db, { prefix })) as Taskrow<unknown>;
    return { tr, committed: (fn) => inKnexTransaction(db, 'commit', (trx) => fn(trx)), end: () => db.destroy() };
  },
  async sequelize(url, prefix) {
    const db: Sequelize = sequelizeFor(url, 4);
    const tr = (await sequelizeTaskrow(db, { prefix })) as Taskrow<unknown>;
    return { tr, committed: (fn) => inSequelizeTransaction(db, 'commit', (t) => fn(t)), end: () => db.close() };
  },
};

const target = targets()[0]!;
for (const [adapter, open] of Object.entries(adapters)) {
  describe(`${label(target)} · ${adapter} · a transactional enqueue wakes this process's workers at commit`, () => {
    const prefix = `cw${process.pid.toString(36)}${adapter.slice(0, 3)}_`;
    let opened: Opened | undefined;

    afterAll(async () => {
      await opened?.end();
      const probe = await mysql2Probe(target.url);
      await dropPrefix(probe, prefix);
      await probe.end();
    });

    it('an idle worker of this process runs the job within a second of the commit, not at its next poll', async () => {
      opened = await open(target.url, prefix);
      await opened.tr.migrate();
      const started: number[] = [];
      const worker = opened.tr.queue('cw').work(async () => void started.push(performance.now()), { pollInterval: POLL_INTERVAL });
      try {
        await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS));
        const tr = opened.tr;
        await opened.committed((tx) => tr.in(tx).queue('cw').enqueue('x'));
        const committedAt = performance.now();
        await until('the job started', () => started.length === 1, 20);
        expect(started[0]! - committedAt).toBeLessThan(1000);
      } finally {
        await worker.stop();
      }
    });
  });
}
