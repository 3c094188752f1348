import { toNumber } from '../validate.js';
import { errnoOf, result, type DoctorContext } from './context.js';
import type { DoctorCheck } from './types.js';

/** History list length past which the check warns: purge is far behind. */
const HISTORY_WARN = 10_000;
/** Approximate rows of one kept table past which the check warns. */
const ROWS_WARN = 1_000_000;
/** The tables that keep rows after their work is done (see docs/operations.md, Retention). */
const KEPT = ['queue_jobs', 'queue_dedup', 'queue_keys', 'receipts'] as const;
/** "Access denied; you need the PROCESS privilege" and its kin. */
const DENIED = new Set([1227, 1142, 1044]);

/**
 * The `purge-lag` check: InnoDB's history list length (`information_schema.INNODB_METRICS`
 * `trx_rseg_history_len`), the undo that long-open transactions keep from purge; `warn` past
 * 10,000, `skipped` when the user may not read it (it needs `PROCESS`). Read-only.
 */
export async function purgeLagCheck(ctx: DoctorContext): Promise<DoctorCheck> {
  let rows: { n: unknown }[];
  try {
    rows = (await ctx.exec.query<{ n: unknown }>("SELECT `COUNT` AS n FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'")).rows;
  } catch (err) {
    if (!DENIED.has(errnoOf(ctx, err) ?? 0)) throw err;
    return result(
      'purge-lag',
      'skipped',
      'InnoDB history list length not readable: it needs the PROCESS privilege',
      'GRANT PROCESS ON *.* TO the user, if you want this check (no feature needs it)',
    );
  }
  if (rows[0] === undefined) return result('purge-lag', 'skipped', 'this server reports no trx_rseg_history_len');
  const length = toNumber(rows[0].n);
  const details = { historyListLength: length };
  if (length <= HISTORY_WARN) return result('purge-lag', 'ok', `history list length ${length}: purge keeps up`, undefined, details);
  const fix = 'find and end long-open transactions (information_schema.INNODB_TRX, oldest trx_started first); keep transactions short';
  return result('purge-lag', 'warn', `history list length ${length}: purge is behind, and claims walk past the rows it has not removed`, fix, details);
}

/**
 * The `table-sizes` check: approximate rows and bytes of the tables that keep rows after their
 * work (`information_schema.TABLES`, InnoDB's estimates, which MySQL caches for
 * `information_schema_stats_expiry`); `warn` past a million rows in one. Read-only.
 */
export async function tableSizesCheck(ctx: DoctorContext): Promise<DoctorCheck> {
  const names = KEPT.map((t) => `${ctx.prefix}${t}`);
  const { rows } = await ctx.exec.query<{ t: unknown; r: unknown; b: unknown }>(
    `SELECT TABLE_NAME AS t, TABLE_ROWS AS r, DATA_LENGTH + INDEX_LENGTH AS b FROM information_schema.TABLES
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (${names.map(() => '?').join(', ')})`,
    names,
  );
  if (rows.length === 0) return result('table-sizes', 'skipped', `no kept-job tables under prefix "${ctx.prefix}"`);
  const sizes = rows.map((r) => ({ table: String(r.t), rows: toNumber(r.r ?? 0), bytes: toNumber(r.b ?? 0) })).sort((a, b) => a.table.localeCompare(b.table));
  const text = sizes
    .map((s) => `${s.table.slice(ctx.prefix.length)} ~${s.rows.toLocaleString('en-US')} rows (${(s.bytes / 1048576).toFixed(1)} MiB)`)
    .join(', ');
  const big = sizes.filter((s) => s.rows > ROWS_WARN);
  if (big.length === 0) return result('table-sizes', 'ok', text, undefined, { tables: sizes });
  const fix = 'purge done jobs (keepFinishedFor, purge()), dead jobs (purgeDead() or retryDead()) and unused keys (purgeKeys(), taskrow queue purge-keys)';
  return result('table-sizes', 'warn', `${text}: ${big.map((s) => s.table).join(', ')} past ${ROWS_WARN.toLocaleString('en-US')} rows`, fix, { tables: sizes });
}
