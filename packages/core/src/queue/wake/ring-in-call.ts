import type { Executor } from '../../engine/executor.js';
import type { SqlValue } from '../../port.js';
import { toNumber } from '../../validate.js';
import { callRows, mayCall } from '../routines/call.js';
import type { QueueTables } from '../model/tables.js';

/**
 * The enqueue of one job by CALL that also rings the queue's doorbell (the hand-off procedure,
 * `handoff/hand-call.ts`), for `enqueue/call.ts`.
 */

/** What the ring of an enqueue's CALL found: sleepers interrupted (-1: the queue has no guard row), or the server's error number when it failed. */
export type CallRingAnswer = { readonly found: number } | { readonly errno: number | undefined };

/** A ring an enqueue's CALL sends after its commit (see `ringInCall` in `ring.ts`). */
export interface RingInCall {
  /** Most sleepers the CALL interrupts. */
  readonly max: number;
  /** The CALL rang: what its ring answered (undefined when the adapter passed no answer on). */
  rang(answer: CallRingAnswer | undefined): void;
}

/**
 * `CALL enqueue_job(params)`, or, with `ring`, `enqueue_job_and_hand(params, ring.max)` where the
 * server has it (the ring may lease the job to a sleeper that can run it), which reports the
 * ring's answer to `ring.rang`. The enqueue's result set's rows, or undefined, having run nothing,
 * when neither can be called. A ring not sent (no procedure) is left to the caller: `rang` was not
 * called.
 */
export async function enqueueCallRows<Row>(
  exec: Executor,
  t: QueueTables,
  params: readonly SqlValue[],
  ring: RingInCall | undefined,
): Promise<Row[] | undefined> {
  if (ring !== undefined && mayCall(exec, t.enqueueHandCall)) {
    const rows = await callRows<Row>(exec, t.enqueueHandCall, [...params, ring.max]);
    if (rows !== undefined) {
      ring.rang(answerOf(rows[0] as RingRow | undefined));
      return rows;
    }
  }
  return callRows<Row>(exec, t.enqueueCall, params);
}

/** A row with a ring's answer. */
type RingRow = { found?: unknown; ring_errno?: unknown };

/** The ring's answer row as a `CallRingAnswer`. */
function answerOf(row: RingRow | undefined): CallRingAnswer | undefined {
  if (row === undefined) return undefined;
  if (row.found !== null && row.found !== undefined) return { found: toNumber(row.found) };
  return { errno: row.ring_errno === null || row.ring_errno === undefined ? undefined : toNumber(row.ring_errno) };
}
