import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import type { Taskrow, TaskrowOptions } from '@taskrow/core';
import { taskrow } from '@taskrow/mysql2';
import type { ServerTarget } from '@taskrow/servers';
import { label, targets } from '../src/targets.js';

/** Where every scenario appends its summary as one JSON line (the figures of the closing note). */
export const FIGURES = fileURLToPath(new URL('../../.taskrow/chaos-figures.jsonl', import.meta.url));

/**
 * `statementTimeout` (milliseconds) is the bound issue 12 asks core for: a statement with no answer
 * within it is abandoned, its connection destroyed and the operation retried as a lost connection.
 * Until core has it the option is passed through a cast (and ignored by a core that lacks it).
 */
export function chaosOptions(prefix: string, statementTimeout = 2000): TaskrowOptions {
  return { prefix, statementTimeout } as TaskrowOptions;
}

/** `p`'s value if it settles within `ms`, `undefined` if it does not (a rejection within `ms` rejects). */
export async function answersWithin<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)));
  p.catch(() => undefined); // a late rejection is not an unhandled one
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `cond` every 50 ms until it holds; rejects naming `what` after `ms`. */
export async function waitFor(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!(await cond())) {
    if (performance.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One scenario's figures, as the summary line and the JSON line print them. */
export interface Summary {
  readonly scenario: string;
  readonly server: string;
  readonly adapter: string;
  readonly jobs: number;
  readonly kills: number;
  readonly restarts: number;
  readonly lost: number;
  readonly duplicated: number;
  readonly doubleCompletions: number;
  readonly errors: number;
  /** (blackhole) abort time minus lease end, ms: negative means the holder stopped in time. */
  readonly leaseEndToAbortMs?: number | null;
  readonly note?: string;
}

/** Prints the scenario's one summary line and appends it to `FIGURES`. */
export function report(s: Summary): void {
  const abort =
    s.leaseEndToAbortMs === undefined ? '' : `, lease end to abort ${s.leaseEndToAbortMs === null ? 'never' : `${s.leaseEndToAbortMs.toFixed(0)} ms`}`;
  process.stdout.write(
    `\n## chaos ${s.scenario} (${s.server}, ${s.adapter}): jobs ${s.jobs}, kills ${s.kills}, restarts ${s.restarts}, ` +
      `lost ${s.lost}, duplicated ${s.duplicated}, double completions ${s.doubleCompletions}, errors to callers ${s.errors}${abort}` +
      `${s.note ? `; ${s.note}` : ''}\n`,
  );
  mkdirSync(dirname(FIGURES), { recursive: true });
  appendFileSync(FIGURES, `${JSON.stringify({ at: new Date().toISOString(), ...s })}\n`);
}

/** A taskrow over its own pool, with a probe connection and the tables of one prefix to drop. */
export interface Scene {
  readonly prefix: string;
  readonly pool: mysql.Pool;
  readonly tr: Taskrow<mysql.PoolConnection>;
  /** Plain SQL on its own connection (never through a proxy): the independent side channel. */
  probe<Row = mysql.RowDataPacket>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** The prefix's table, quoted. */
  table(name: string): string;
  close(): Promise<void>;
}

let sceneCount = 0;

/** Opens a scene on `url`: a pool (`connectionLimit`), `taskrow(pool)` migrated, and a probe. */
export async function openScene(url: string, connectionLimit = 10, statementTimeout = 2000, options: TaskrowOptions = {}): Promise<Scene> {
  const prefix = `chaos${process.pid}_${++sceneCount}_`;
  const pool = mysql.createPool({ uri: url, connectionLimit });
  pool.on('connection', (c) => c.on('error', () => undefined));
  // The probe reconnects once when its connection is gone (a server restart ends it).
  let probeConn = await mysql.createConnection(url);
  probeConn.on('error', () => undefined);
  const probe = async <Row>(sql: string, params: unknown[] = []): Promise<Row[]> => {
    try {
      return (await probeConn.query(sql, params))[0] as Row[];
    } catch (err) {
      if (!(err as { fatal?: boolean }).fatal) throw err;
      probeConn.destroy();
      probeConn = await mysql.createConnection(url);
      probeConn.on('error', () => undefined);
      return (await probeConn.query(sql, params))[0] as Row[];
    }
  };
  const tr = (await taskrow(pool, { ...chaosOptions(prefix, statementTimeout), ...options })) as Taskrow<mysql.PoolConnection>;
  await tr.migrate();
  return {
    prefix,
    pool,
    tr,
    probe,
    table: (name) => `\`${prefix}${name}\``,
    async close() {
      await pool.end().catch(() => undefined);
      const rest = await probe<{ t: string }>('SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?', [
        `${prefix.replace(/_/g, '\\_')}%`,
      ]).catch(() => []);
      for (const r of rest) await probe(`DROP TABLE IF EXISTS \`${r.t}\``).catch(() => undefined);
      await probeConn.end().catch(() => undefined);
    },
  };
}

/** The servers of this run, limited by TASKROW_CHAOS_TARGETS (labels such as "mariadb 10.11"). */
export function chaosTargets(): ServerTarget[] {
  const only = process.env['TASKROW_CHAOS_TARGETS']?.split(',').map((s) => s.trim());
  return targets().filter((t) => !only || only.includes(label(t)));
}
