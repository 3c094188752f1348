import { fromMicros } from '../../sql.js';
import { PHASE } from '../model/tables.js';

/**
 * The locking read of a queue's ready rows, written once for the client's claim (`claim.ts`) and
 * the claim procedure (`call.ts`). Each part is SQL: `?` in a client's statement, the procedure's
 * parameters in the routine.
 */

/** The order claims take ready rows in (the `claim` index's order past queue and phase), columns qualified by `alias`. */
export const claimOrder = (alias = ''): string => ['ready_priority', 'due_at', 'grp', 'id'].map((c) => `${alias}\`${c}\``).join(', ');

/** What a locking read of the ready rows reads: each field SQL (see `lockReadySql`). */
export interface ReadyRead {
  /** The columns it returns. */
  readonly columns: string;
  readonly queue: string;
  /** Only rows of this group (`?`), when given. */
  readonly group?: string | undefined;
  /**
   * Only rows from this place on, when given: a higher `ready_priority`, or the same one and a due
   * time from `dueUs` (microseconds since the epoch) on. `priority` stands twice in the text (a `?`
   * there takes two parameters).
   */
  readonly from?: { readonly priority: string; readonly dueUs: string } | undefined;
  /** More conditions, each ANDed (plain reads: a locking read locks only its outer rows). */
  readonly also?: readonly string[] | undefined;
  readonly limit: string;
}

/**
 * `SELECT ... FOR UPDATE SKIP LOCKED` of up to `r.limit` ready rows of `r.queue` in `jobs`, over
 * the `claim` index range of ready rows in claim order (`claimOrder`). MUST NOT wait on a row
 * another claimer holds (it skips it: the loser of a race does not see the row) and locks only the
 * rows it returns. Parameters, for `?` each: queue, group, from (priority twice, then due time),
 * then those of `also`.
 */
export const lockReadySql = (jobs: string, r: ReadyRead): string => {
  const group = r.group === undefined ? '' : ` AND \`grp\` = ${r.group}`;
  const from =
    r.from === undefined
      ? ''
      : ` AND (\`ready_priority\` > ${r.from.priority} OR (\`ready_priority\` = ${r.from.priority} AND \`due_at\` >= ${fromMicros(r.from.dueUs)}))`;
  const also = (r.also ?? []).map((c) => `\n       AND ${c}`).join('');
  return `SELECT ${r.columns}
     FROM ${jobs} FORCE INDEX (\`claim\`)
     WHERE \`queue\` = ${r.queue}${group} AND \`phase\` = ${PHASE.ready}${from}${also}
     ORDER BY ${claimOrder()} LIMIT ${r.limit} FOR UPDATE SKIP LOCKED`;
};
