import { slot, type InstanceState } from '../../instance.js';
import { performance } from 'node:perf_hooks';
import type { Handed } from '../model/claimed.js';

/**
 * In-process wake-ups and shared polling. An enqueue that committed rings idle workers of that
 * queue in this process, so they claim at once instead of at their next poll; workers of one
 * queue and group that read through one client poll for each other: one that looked at the queue
 * acts on what it saw for all of them. Rings are keyed by jobs table and queue name, and go first
 * to workers reading through the enqueue's own client: two databases with the same prefix and
 * queue name in one process share a registry, which can cost a spare claim, never a missed job.
 */
export interface Bell {
  /** The worker's group filter: looks are shared between workers of one group only. */
  readonly group: string | undefined;
  /** Wakes the worker: its next claim goes without a probe, at once or when a handler slot frees. */
  ring(): void;
  /** Jobs this worker's next claim would take now (0 while all its handler slots are taken). */
  room(): number;
  /**
   * Where the worker is: `napping` between polls (no claim of its in flight); `before-read` with a
   * claim on its way whose read of the queue is not sent yet (that read sees every job committed
   * now: it needs no ring); `busy` otherwise.
   */
  stage(): 'napping' | 'before-read' | 'busy';
  /** `jobs` of a worker `before-read` are counted on to be taken by its claim (less `room()` for the next enqueue). */
  cover(jobs: number): void;
  /**
   * Holds `jobs` handler slots for jobs an enqueue of this process leases to the worker (see
   * `local-hand.ts`), when that many are free now and it runs jobs of every group; undefined
   * otherwise, and for a worker that runs none.
   */
  reserve?(jobs: number): Runner | undefined;
}

/** A worker holding handler slots for the jobs of one enqueue (see `Bell.reserve`). */
export interface Runner {
  /** The lease (microseconds) the jobs are leased for. */
  readonly leaseMicros: number;
  /** Runs the jobs leased to it (by a statement sent at `sentAt`, `performance.now()`), or gives them back when it is stopping. MUST NOT throw. */
  take(handed: Handed<unknown>, sentAt: number): void;
  /** The enqueue leased nothing: the slots are free again. */
  cancel(): void;
}

/** The last look at the queue by a worker of one group: when it was sent, and by whom. */
interface Look {
  readonly at: number;
  readonly by: Bell;
}

/** Where a worker belongs: the client its claims read through, the server and database it reaches (when known), and the key its looks are shared under (that client and its group). */
interface Member {
  readonly source: number;
  readonly server: string | undefined;
  readonly look: string;
}

interface Registry {
  readonly bells: Map<Bell, Member>;
  readonly looks: Map<string, Look>;
}

/** A worker's view of its siblings (the other workers of its queue in this process). */
export interface Siblings {
  /** This worker sends a read of the queue now (a probe, or a claim's read) and acts on what it sees. */
  looked(): void;
  /** Whether another worker of this group looked at the queue after `since` (`performance.now()`): it saw what this one would. */
  lookedSince(since: number): boolean;
  /** Rings one napping worker of this group (this one's claim came back full: more jobs may wait). */
  wakeOne(): void;
  unsubscribe(): void;
}

const keyOf = (jobsTable: string, queue: string): string => `${jobsTable}\u0000${queue}`;

/** The workers of one taskrow instance by jobs table and queue, and what tells its clients apart. */
interface Wake {
  readonly registries: Map<string, Registry>;
  /** A number per client, so that looks are shared only between workers reading the same database. */
  readonly sources: WeakMap<object, number>;
  nextSource: number;
  /** Where the next partial ring starts. */
  turn: number;
}

const WAKE = slot<Wake>('wake-ups', () => ({ registries: new Map(), sources: new WeakMap(), nextSource: 0, turn: 0 }));

function sourceId(w: Wake, source: object): number {
  let id = w.sources.get(source);
  if (id === undefined) w.sources.set(source, (id = w.nextSource++));
  return id;
}

function member(w: Wake, source: object, server: string | undefined, bell: Bell): Member {
  const id = sourceId(w, source);
  return { source: id, server, look: bell.group === undefined ? `${id}` : `${id}:${bell.group}` };
}

/** The workers of one registry in turn, the next call starting one further. */
function inTurn(w: Wake, reg: Registry | undefined): Bell[] {
  const all = [...(reg?.bells.keys() ?? [])];
  const from = all.length > 0 ? w.turn++ % all.length : 0;
  return all.map((_, i) => all[(from + i) % all.length]!);
}

function note(reg: Registry, bell: Bell): void {
  const m = reg.bells.get(bell);
  if (m !== undefined) reg.looks.set(m.look, { at: performance.now(), by: bell });
}

/**
 * Tells `bell` of committed enqueues into `queue` of `jobsTable` in the taskrow instance `state` (see `enqueued`),
 * and shares its looks with the workers of its group whose claims read through `source` (the client).
 * `server` names the server and database `source` reaches (`Dialect.server`), when known: an
 * enqueue through another client of the same server may lease its jobs to the worker (`runnerFor`).
 */
export function onEnqueue(state: InstanceState, jobsTable: string, queue: string, bell: Bell, source: object, server?: string): Siblings {
  const w = state.get(WAKE);
  const key = keyOf(jobsTable, queue);
  const reg = w.registries.get(key) ?? { bells: new Map(), looks: new Map() };
  w.registries.set(key, reg);
  const mine = member(w, source, server, bell);
  reg.bells.set(bell, mine);
  return {
    looked: () => note(reg, bell),
    lookedSince(since) {
      const look = reg.looks.get(mine.look);
      return look !== undefined && look.by !== bell && look.at > since;
    },
    wakeOne() {
      const next = inTurn(w, reg).find((b) => b !== bell && reg.bells.get(b)?.look === mine.look && b.stage() === 'napping' && b.room() > 0);
      if (next) {
        note(reg, next);
        next.ring();
      }
    },
    unsubscribe() {
      reg.bells.delete(bell);
      if (reg.bells.size === 0) w.registries.delete(key);
    },
  };
}

/** Whether the taskrow instance `state` has a worker of `queue` of `jobsTable` (of any client). */
export function hasWorkers(state: InstanceState, jobsTable: string, queue: string): boolean {
  return state.get(WAKE).registries.has(keyOf(jobsTable, queue));
}

/**
 * A napping worker of `queue` of `jobsTable` in this process that reads the same tables as
 * `source` (the enqueue's client: the worker's own, or another of the same `server`, when known)
 * and holds `jobs` free handler slots for an enqueue to lease its jobs to (see `local-hand.ts`);
 * undefined when none can. The oldest such worker first: an enqueue after another goes to the same
 * worker while it has room, so their completions share batches. The caller MUST end what it gets
 * (`take` or `cancel`).
 */
export function runnerFor(
  state: InstanceState,
  jobsTable: string,
  queue: string,
  jobs: number,
  source: object,
  server: string | undefined,
): Runner | undefined {
  const w = state.get(WAKE);
  const reg = w.registries.get(keyOf(jobsTable, queue));
  if (reg === undefined) return undefined;
  const from = sourceId(w, source);
  for (const [b, m] of reg.bells) {
    if (m.source !== from && (server === undefined || m.server !== server)) continue;
    if (b.stage() !== 'napping') continue;
    const runner = b.reserve?.(jobs);
    if (runner !== undefined) return runner;
  }
  return undefined;
}

const ORDER = { 'before-read': 0, napping: 1, busy: 2 } as const;

/**
 * Tells workers of `queue` of `jobsTable` in this process that `jobs` jobs of it became ready by a
 * commit through `source` (the client). Workers reading through that client come first, each
 * group in turn: those whose claim is about to read the queue are counted on (they are not rung:
 * a ring would make them claim once more, for jobs their read takes anyway), then napping workers
 * are rung (one in the middle of a claim may be taking these very jobs already), then busy ones
 * (such a worker claims when a slot frees). Workers of other clients come after them and are
 * rung, never counted on (their read may go to another database). This goes on until the claims
 * of those with room together take `jobs`: a few new jobs wake one worker that claims them all,
 * not every worker of the queue (the others' claims would find nothing; they still poll).
 * Returns how many of the jobs those claims cover.
 */
export function enqueued(state: InstanceState, jobsTable: string, queue: string, jobs: number, source: object): number {
  const w = state.get(WAKE);
  const reg = w.registries.get(keyOf(jobsTable, queue));
  if (reg === undefined) return 0;
  const from = sourceId(w, source);
  const order = new Map(
    inTurn(w, reg).map((b) => {
      const own = reg.bells.get(b)!.source === from;
      const stage = b.stage();
      return [b, { cover: own && stage === 'before-read', rank: (own ? 0 : 3) + ORDER[stage] }];
    }),
  );
  let covered = 0;
  for (const [b, { cover }] of [...order].sort(([, x], [, y]) => x.rank - y.rank)) {
    if (covered >= jobs) break;
    const room = Math.min(b.room(), jobs - covered);
    if (cover) {
      if (room <= 0) continue;
      b.cover(room);
    } else b.ring();
    if (room > 0) note(reg, b);
    covered += room;
  }
  return Math.min(covered, jobs);
}
