import { slot, type InstanceState } from '../../instance.js';
import { performance } from 'node:perf_hooks';
import { toNumber } from '../../validate.js';

/**
 * How long (ms) claims may go on reading a backlog from where the last full claim ended before one
 * of them (of any process: see `takeHeadTurn`) reads from the head of the ready rows again.
 */
export const CURSOR_MS = 1000;

/** A place in the ready range of the `claim` index: a priority and a due time (epoch µs). */
export interface Position {
  readonly priority: number;
  readonly dueUs: number;
}

/** Where the last full claim ended, and when a claim of this process (or of another, see `headRead`) last read from the head. */
interface Mark extends Position {
  readonly since: number;
}

/** What a claim read from: `from` (undefined: the head), the rewinds seen so far, and when the head was last read. */
export interface Ticket {
  readonly from: Position | undefined;
  readonly rewinds: number;
  readonly since: number;
}

/** The last row of a claim's read, as the claim reads it. */
interface LastRow {
  readonly priority: unknown;
  readonly due_us: unknown;
}

/**
 * The read position of the claims of one queue in this process (all handles of it through one
 * client), per group filter. A claim lock-reads the ready rows in `claim` index order; the rows
 * it leases leave the ready range, but their index entries stay there, delete-marked, until purge
 * removes them, and every later claim that starts at the head walks them (with 32 claimers on
 * MariaDB, purge falls behind and the walk grows with the backlog already drained). A claim that
 * starts where the process's last full claim ended skips that walk. Every ready row before that
 * place was taken or locked by a claim when that claim read.
 *
 * Rows made ready behind the position (a job due again, a blocked job admitted, a release, a
 * job of a lower priority number, a claim rolled back) are seen by: a read from the position that
 * comes back short (the claim then reads from the head in the same transaction), a claim begun
 * after anything of this process made jobs of the queue ready (`rewind`), and a read from the
 * head about once per `CURSOR_MS`. The processes claiming from the queue take turns at that one
 * (`headDue`, `headRead`, and `takeHeadTurn` in `claim.ts`): one claim of the fleet reads the
 * head about once per `CURSOR_MS`, not one per process, for each walks the entries purge has not
 * removed yet. So such a job waits about `CURSOR_MS` at most behind a backlog that another
 * process feeds, and never while the queue has no backlog.
 *
 * A claim by CALL that holds the queue's claim lock (see `claim/call.ts`) is
 * sent with this place but reads from the fleet's: where the last claim that held the lock ended.
 * A claim sent with no place (the head) reads the head there too.
 */
export interface ClaimCursor {
  /** Where a claim of `group` may start reading (the ready rows from `from`'s priority and due time on); `from` undefined: at the head. */
  start(group: string | undefined): Ticket;
  /** A ticket to read from the head now. */
  head(): Ticket;
  /**
   * After a read of `limit` rows made with `ticket` found `rows` (in index order): a full read
   * moves the position to its last row, a short one drops it (no backlog is left). A read begun
   * before a `rewind` changes nothing: it may have missed what the rewind announced.
   */
  read(group: string | undefined, ticket: Ticket, rows: readonly LastRow[], limit: number): void;
  /** `read`, told by count and last row's place instead of the rows (a claim whose read ran in the server, see `claim-call.ts`). */
  readEnd(group: string | undefined, ticket: Ticket, count: number, last: Position | undefined, limit: number): void;
  /**
   * Jobs of the queue were made ready in this process: claims begun from now on read from the
   * head. `priority`: the jobs were enqueued ready now, the least of them with this priority
   * (they are behind a position only when it is at a greater priority).
   */
  rewind(priority?: number): void;
  /** Claims of `group` read from a place and have not read the head for `CURSOR_MS`: the next claim may take the turn to. */
  headDue(group: string | undefined): boolean;
  /** A claim of another process took the turn to read the head: claims of `group` go on from their place for `CURSOR_MS`. */
  headRead(group: string | undefined): void;
}

interface Marks {
  readonly byGroup: Map<string, Mark>;
  rewinds: number;
}

const MARKS = slot('claim read positions', () => new Map<string, Marks>());

const groupKey = (group: string | undefined): string => (group === undefined ? '' : `g:${group}`);

/** The read position of the claims of `queue` of `jobsTable` in the taskrow instance `state` (shared by every handle of it). */
export function claimCursor(state: InstanceState, jobsTable: string, queue: string): ClaimCursor {
  const queues = state.get(MARKS);
  const key = `${jobsTable}\u0000${queue}`;
  const m = queues.get(key) ?? { byGroup: new Map<string, Mark>(), rewinds: 0 };
  queues.set(key, m);
  const head = (): Ticket => ({ from: undefined, rewinds: m.rewinds, since: performance.now() });
  const readEnd: ClaimCursor['readEnd'] = (group, ticket, count, last, limit) => {
    if (ticket.rewinds !== m.rewinds) return;
    if (count < limit || last === undefined) return void m.byGroup.delete(groupKey(group));
    m.byGroup.set(groupKey(group), { priority: last.priority, dueUs: last.dueUs, since: ticket.since });
  };
  const due = (mark: Mark | undefined): boolean => mark !== undefined && performance.now() - mark.since >= CURSOR_MS;
  return {
    start(group) {
      const mark = m.byGroup.get(groupKey(group));
      if (mark === undefined || due(mark)) return head();
      return { from: mark, rewinds: m.rewinds, since: mark.since };
    },
    head,
    read(group, ticket, rows, limit) {
      const last = rows.at(-1);
      readEnd(group, ticket, rows.length, last && { priority: toNumber(last.priority), dueUs: toNumber(last.due_us) }, limit);
    },
    readEnd,
    rewind(priority) {
      if (priority !== undefined && ![...m.byGroup.values()].some((mark) => mark.priority > priority)) return;
      m.byGroup.clear();
      m.rewinds++;
    },
    headDue: (group) => due(m.byGroup.get(groupKey(group))),
    headRead(group) {
      const mark = m.byGroup.get(groupKey(group));
      if (mark !== undefined) m.byGroup.set(groupKey(group), { ...mark, since: performance.now() });
    },
  };
}
