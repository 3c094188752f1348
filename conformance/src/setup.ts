import mysql from 'mysql2/promise';
import { afterAll, beforeAll } from 'vitest';
import type { Taskrow, TaskrowOptions } from '@taskrow/core';
import { dropPrefix } from '@taskrow/core/conformance';
import { taskrow, type Mysql2Connection } from '@taskrow/mysql2';
import type { ServerTarget } from '@taskrow/servers';
import { mysql2Probe } from './harnesses/mysql2.js';
import { label } from './targets.js';

export { until } from '@taskrow/core/conformance';

/** A probe on a plain mysql2 connection of its own, with the `end()` that closes it. */
export type OwnProbe = Awaited<ReturnType<typeof mysql2Probe>>;

/** A mysql2 pool on one server, taskrow over it on a prefix whose tables are migrated, and a probe. */
export interface MigratedPool {
  readonly target: ServerTarget;
  readonly prefix: string;
  /** The application's pool: `connectionLimit` connections (default 4). */
  readonly pool: mysql.Pool;
  /** `taskrow(pool, { ...options.taskrow, prefix })`, the schema migrated. */
  readonly tr: Taskrow<Mysql2Connection>;
  /** Plain SQL on a connection outside the pool: the side channel writes are verified through. */
  readonly probe: OwnProbe;
  /** Drops every table and procedure of `prefix`, then ends the probe and the pool. MUST NOT leave either open, whatever fails. */
  end(): Promise<void>;
}

/** Where `openMigratedPool` opens: the table prefix (fresh for the file), the pool's size and taskrow's options. */
export interface MigratedPoolOptions {
  readonly prefix: string;
  /** Default 4. */
  readonly connectionLimit?: number;
  /** The rest of taskrow's options (a statement timeout, retries); the prefix is `prefix`. */
  readonly taskrow?: Omit<TaskrowOptions, 'prefix'>;
}

/**
 * Opens a pool on `target`, migrates `prefix` through `taskrow(pool, { ...options.taskrow, prefix })` and opens a probe.
 * Resolves only once the tables exist; on a failure it closes what it opened and rejects.
 */
export async function openMigratedPool(target: ServerTarget, options: MigratedPoolOptions): Promise<MigratedPool> {
  const { prefix } = options;
  const pool = mysql.createPool({ uri: target.url, connectionLimit: options.connectionLimit ?? 4 });
  let probe: OwnProbe | undefined;
  try {
    const tr = await taskrow(pool, { ...options.taskrow, prefix });
    await tr.migrate();
    probe = await mysql2Probe(target.url);
    const opened = probe;
    return {
      target,
      prefix,
      pool,
      tr,
      probe: opened,
      async end() {
        try {
          await dropPrefix(opened, prefix);
        } finally {
          await opened.end().catch(() => undefined);
          await pool.end().catch(() => undefined);
        }
      },
    };
  } catch (err) {
    await probe?.end().catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw err;
  }
}

/**
 * Registers `beforeAll` / `afterAll` in the enclosing `describe`: a pool, a migrated prefix and a
 * probe (see `openMigratedPool`) for its tests, the prefix dropped after them. Read the fields only
 * inside a test or hook: before `beforeAll` ran, or when it failed, each read throws with the reason,
 * so every test of the block fails (a failing hook alone would only mark them skipped).
 */
export function useMigratedPool(target: ServerTarget, options: MigratedPoolOptions): MigratedPool {
  let opened: MigratedPool | undefined;
  let failed: unknown;
  beforeAll(async () => {
    opened = await openMigratedPool(target, options).catch((err: unknown) => void (failed = err));
  });
  afterAll(async () => {
    await opened?.end();
    opened = undefined;
  });
  const get = (): MigratedPool => {
    if (opened) return opened;
    const why = failed instanceof Error ? failed.message : failed === undefined ? 'read before beforeAll ran' : String(failed);
    throw new Error(`the migrated pool on ${label(target)} did not open: ${why}`, { cause: failed });
  };
  return {
    target,
    prefix: options.prefix,
    get pool() {
      return get().pool;
    },
    get tr() {
      return get().tr;
    },
    get probe() {
      return get().probe;
    },
    end: async () => get().end(),
  };
}
