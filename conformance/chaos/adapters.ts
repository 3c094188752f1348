import mariadb from 'mariadb';
import mysql from 'mysql2/promise';
import type { Taskrow, TaskrowOptions } from '@taskrow/core';
import { mariadbUrl, taskrow as overMariadb } from '@taskrow/mariadb';
import { taskrow as overMysql2 } from '@taskrow/mysql2';

/** A taskrow over a pool of its own, and how to end that pool. */
export interface Opened {
  readonly tr: Taskrow;
  end(): Promise<void>;
}

/** One adapter the fault scenarios run through: a pool of its driver to `url`, and taskrow over it. */
export interface ChaosAdapter {
  readonly name: 'mysql2' | 'mariadb';
  open(url: string, connectionLimit: number, options: TaskrowOptions): Promise<Opened>;
}

const MYSQL2: ChaosAdapter = {
  name: 'mysql2',
  async open(url, connectionLimit, options) {
    const pool = mysql.createPool({ uri: url, connectionLimit, connectTimeout: 3000 });
    pool.on('connection', (c) => c.on('error', () => undefined));
    return { tr: await overMysql2(pool, options), end: () => pool.end().catch(() => undefined) };
  },
};

const MARIADB: ChaosAdapter = {
  name: 'mariadb',
  async open(url, connectionLimit, options) {
    const base = mariadbUrl(url, { allowPublicKeyRetrieval: true });
    const pool = mariadb.createPool(`${base}${base.includes('?') ? '&' : '?'}connectionLimit=${connectionLimit}&connectTimeout=3000`);
    return { tr: await overMariadb(pool, options), end: () => pool.end().catch(() => undefined) };
  },
};

/** The adapters of this run: TASKROW_CHAOS_ADAPTERS (`mysql2,mariadb`), default both. */
export function chaosAdapters(): ChaosAdapter[] {
  const names = (process.env['TASKROW_CHAOS_ADAPTERS'] ?? 'mysql2,mariadb').split(',').map((s) => s.trim());
  return [MYSQL2, MARIADB].filter((a) => names.includes(a.name));
}
