import type { Executor } from '../../engine/executor.js';
import type { SqlValue } from '../../port.js';
import { toNumber } from '../../validate.js';
import { callResults, mayCall } from '../routines/call.js';
import type { QueueTables } from '../model/tables.js';

/**
 * Enqueues by CALL that also ring the queue's doorbell (the procedures of `ring-call.ts`), for
 * `call.ts` and `many-call.ts`.
 */

/** What the ring of an enqueue's CALL found: sleepers interrupted (-1: the queue has no guard row), or the server's error number when it failed. */
export type CallRingAnswer = { readonly found: number } | { readonly errno: number | undefined };

/** A ring an enqueue's CALL sends after its commit (see `ringInCall` in `ring.ts`). */
export interface RingInCall {
  /** Most sleepers the CALL interrupts. */
  readonly max: number;
  /** The CALL rang: what its ring answered (undefined when the adapter passed no second result set on). */
  rang(answer: CallRingAnswer | undefined): void;
}

/**
 * `CALL procedure(params)`, or, with `ring`, its counterpart that also rings where the server has
 * it: for one job `…_and_hand` (the ring may lease the job to a sleeper that can run
 * it, see `hand-call.ts`), else `…_and_ring`, with `ring.max`, which reports the
 * ring's answer to `ring.rang`. The enqueue's first result set's rows, or undefined, having run
 * nothing, when no procedure can be called. A ring not sent (no procedure) is left to the caller:
 * `rang` was not called.
 */
export async function enqueueCallRows<Row>(
  exec: Executor,
  t: QueueTables,
  many: boolean,
  params: readonly SqlValue[],
  ring: RingInCall | undefined,
): Promise<Row[] | undefined> {
  const rung = ring === undefined ? undefined : await callRinging(exec, t, many, params, ring);
  if (rung !== undefined) return rung.rows as Row[] | undefined;
  return (await callResults(exec, many ? t.enqueueManyCall : t.enqueueCall, params))?.[0] as Row[] | undefined;
}

/** The first of the ringing procedures the server has, called (see `enqueueCallRows`): its first result set's rows; undefined, having run nothing, when none can be. */
async function callRinging(
  exec: Executor,
  t: QueueTables,
  many: boolean,
  params: readonly SqlValue[],
  ring: RingInCall,
): Promise<{ rows: unknown[] | undefined } | undefined> {
  for (const procedure of many ? [t.enqueueManyRingCall] : [t.enqueueHandCall, t.enqueueRingCall]) {
    const sets = mayCall(exec, procedure) ? await callResults(exec, procedure, [...params, ring.max]) : undefined;
    if (sets === undefined) continue;
    // The ring's answer: its own result set after the enqueue's (`…_and_ring`), or the enqueue's one row (`…_and_hand`).
    const first = sets[0]?.[0] as Record<string, unknown> | undefined;
    ring.rang(answerOf((sets[1]?.[0] ?? (first !== undefined && 'found' in first ? first : undefined)) as RingRow | undefined));
    return { rows: sets[0] };
  }
  return undefined;
}

/** A row with a ring's answer. */
type RingRow = { found?: unknown; ring_errno?: unknown };

/** The ring's answer row as a `CallRingAnswer`. */
function answerOf(row: RingRow | undefined): CallRingAnswer | undefined {
  if (row === undefined) return undefined;
  if (row.found !== null && row.found !== undefined) return { found: toNumber(row.found) };
  return { errno: row.ring_errno === null || row.ring_errno === undefined ? undefined : toNumber(row.ring_errno) };
}
