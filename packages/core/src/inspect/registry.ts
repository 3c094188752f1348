import { donesTables } from '../dones/tables.js';
import type { Executor } from '../engine/executor.js';
import { loopRegistryTable } from '../loop/tables.js';
import { epochMicros } from '../queue/model/tables.js';
import { toNumber } from '../validate.js';
import { capped } from './args.js';
import type { DonesSummary, InspectPage, LoopSummary } from './types.js';

const textOf = (v: unknown): string => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v));
const dateOf = (us: unknown): Date => new Date(toNumber(us) / 1000);

function paged<T>(rows: T[], limit: number, nameOf: (row: T) => string): { page: T[]; next: string | undefined } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { page, next: rows.length > limit && last ? nameOf(last) : undefined };
}

/** A page of the loop registry in name order: one primary-key range read of `limit + 1` rows. */
export async function loopPage(exec: Executor, prefix: string, after: string | undefined, limit: number): Promise<InspectPage<LoopSummary>> {
  const { rows } = await exec.query<{ name: unknown; id_type: unknown; created_us: unknown }>(
    `SELECT \`name\`, \`id_type\`, ${epochMicros('`created_at`')} AS created_us FROM ${loopRegistryTable(prefix)}
     WHERE \`name\` > ? ORDER BY \`name\` LIMIT ${limit + 1}`,
    [after ?? ''],
  );
  const items = rows.map((r) => ({ name: textOf(r.name), idType: textOf(r.id_type), createdAt: dateOf(r.created_us) }));
  const { page, next } = paged(items, limit, (l) => l.name);
  return { items: page, next };
}

type NsRow = { name: unknown; gen: unknown; created_us: unknown };

/** Counts one generation's done keys: a primary-key range read stopped at `cap + 1` rows. */
async function summarize(exec: Executor, prefix: string, r: NsRow, cap: number): Promise<DonesSummary> {
  const counted = await exec.query<{ n: unknown }>(
    `SELECT COUNT(*) AS n FROM (SELECT 1 AS x FROM ${donesTables(prefix).dones} WHERE \`gen\` = ? LIMIT ${cap + 1}) AS d`,
    [toNumber(r.gen)],
  );
  return { name: textOf(r.name), createdAt: dateOf(r.created_us), count: capped(toNumber(counted.rows[0]?.n), cap) };
}

const NS_COLUMNS = `\`name\`, \`gen\`, ${epochMicros('`created_at`')} AS created_us`;

/**
 * A page of Dones namespaces in name order: one primary-key range read of `limit + 1` rows, then
 * per namespace one count of its generation's primary-key range, stopped at `cap + 1` rows.
 */
export async function donesPage(exec: Executor, prefix: string, after: string | undefined, limit: number, cap: number): Promise<InspectPage<DonesSummary>> {
  const { rows } = await exec.query<NsRow>(`SELECT ${NS_COLUMNS} FROM ${donesTables(prefix).ns} WHERE \`name\` > ? ORDER BY \`name\` LIMIT ${limit + 1}`, [
    after ?? '',
  ]);
  const { page, next } = paged(rows, limit, (r) => textOf(r.name));
  const items: DonesSummary[] = [];
  for (const r of page) items.push(await summarize(exec, prefix, r, cap));
  return { items, next };
}

/** One namespace's summary (two statements), or null when it was never used. */
export async function donesOne(exec: Executor, prefix: string, name: string, cap: number): Promise<DonesSummary | null> {
  const { rows } = await exec.query<NsRow>(`SELECT ${NS_COLUMNS} FROM ${donesTables(prefix).ns} WHERE \`name\` = ?`, [name]);
  return rows[0] ? summarize(exec, prefix, rows[0], cap) : null;
}
