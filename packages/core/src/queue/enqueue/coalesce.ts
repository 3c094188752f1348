import { slot } from '../../instance.js';
import type { Executor } from '../../engine/executor.js';
import { TaskrowError } from '../../errors.js';
import { mayHaveCommitted } from '../../retry.js';
import { callable } from './call.js';
import { MAX_CALL_BATCH, MAX_CALL_BATCH_BYTES } from './many-call.js';
import type { JobRow } from '../model/options.js';
import { mayCall } from '../routines/call.js';
import type { QueueTables } from '../model/tables.js';
import type { Enqueued } from '../model/types.js';

/** Sends rows as one enqueue (a queue's `enqueueRows`): one entry per row, in order. */
export type SendRows = (rows: readonly JobRow[]) => Promise<Enqueued[]>;

/** An `enqueue()` waiting for its batch. */
interface Waiting {
  readonly row: JobRow;
  resolve(e: Enqueued): void;
  reject(err: unknown): void;
}

/** One queue's gathering of single enqueues in one process (see `coalescedEnqueue`). */
class Gathering {
  private readonly waiting: Waiting[] = [];
  private bytes = 0;
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly send: SendRows) {}

  /** Queues `row` for the next batch; it leaves at once when it fills one, else on the next turn of the event loop with nothing in flight, else when a batch in flight returns. */
  add(row: JobRow): Promise<Enqueued> {
    return new Promise<Enqueued>((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      this.bytes += row.payloadBytes;
      if (this.waiting.length >= MAX_CALL_BATCH || this.bytes >= MAX_CALL_BATCH_BYTES) this.sendBatch();
      else if (this.inFlight === 0) this.schedule();
    });
  }

  /**
   * Flushes on the next turn of the event loop, so that enqueues asked in the same turn (callers
   * whose previous enqueue just resolved among them) leave together.
   */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      while (this.waiting.length > 0) this.sendBatch();
    });
  }

  /** Sends the first waiting rows that fit one batch CALL (at least one). */
  private sendBatch(): void {
    const batch: Waiting[] = [];
    let bytes = 0;
    while (this.waiting.length > 0 && batch.length < MAX_CALL_BATCH) {
      const next = this.waiting[0]!;
      if (batch.length > 0 && bytes + next.row.payloadBytes > MAX_CALL_BATCH_BYTES) break;
      batch.push(this.waiting.shift()!);
      bytes += next.row.payloadBytes;
    }
    this.bytes -= bytes;
    this.inFlight++;
    void this.settle(batch).finally(() => {
      this.inFlight--;
      if (this.waiting.length > 0) this.schedule();
    });
  }

  /** Sends `batch` and settles each of its callers (see `coalescedEnqueue` for a failed batch). */
  private async settle(batch: readonly Waiting[]): Promise<void> {
    try {
      const out = await this.send(batch.map((w) => w.row));
      for (const [i, w] of batch.entries()) w.resolve(out[i]!);
    } catch (err) {
      if (batch.length === 1 || !refusedWhole(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      await Promise.all(batch.map(async (w) => this.send([w.row]).then(([one]) => w.resolve(one!), w.reject)));
    }
  }
}

/**
 * Whether a batch's failure is the server refusing its statement (an error number from the server:
 * the procedure rolled its transaction back, nothing of the batch committed), rather than a
 * failure whose outcome is unknown (a connection lost past its retries, a timeout, a refusal of
 * the retry after a run whose reply was lost: `mayHaveCommitted`) or a reply that could not be read.
 */
function refusedWhole(err: unknown): boolean {
  return err instanceof TaskrowError && err.code === 'DATABASE_ERROR' && err.errno !== undefined && !mayHaveCommitted(err);
}

const GATHERINGS = slot('gathered enqueues', () => new WeakMap<Executor, Map<string, Gathering>>());

/**
 * Whether single enqueue `row` may be gathered with others through `exec`: one a CALL would take
 * (no dedup key, outside an application transaction: see `callable`), of at most
 * `MAX_CALL_BATCH_BYTES` of payload, where the batch procedure may be called.
 */
export function coalescible(exec: Executor, t: QueueTables, row: JobRow): boolean {
  return row.payloadBytes <= MAX_CALL_BATCH_BYTES && callable(exec, t, [row]) && mayCall(exec, t.enqueueManyCall);
}

/**
 * Enqueues one job (see `coalescible`) together with the single enqueues that the same process asks
 * of the same queue through `exec` meanwhile, every queue handle of it included: a job asked while
 * none is in flight leaves on the next turn of the event loop (alone when no other came, as one
 * job's CALL, so the doorbell may hand it to a sleeping worker); those asked while one is in flight
 * leave together when it returns, up to `MAX_CALL_BATCH` jobs and `MAX_CALL_BATCH_BYTES` of payload
 * in one batch CALL (a full batch leaves at once). Resolves to this job's entry only after the
 * commit that holds it; MUST NOT resolve before it, MUST NOT insert a job twice. When the server
 * refuses a batch (an error number from it: nothing of the batch committed), each of its jobs is
 * sent again alone, so each caller sees its own job's outcome and one job's refusal is not the
 * others'; when the outcome is unknown (a connection lost past its retries, a timeout, the retry
 * after a lost reply refused: `mayHaveCommitted`), every caller of the batch sees that error, as
 * each would have alone.
 */
export function coalescedEnqueue(exec: Executor, t: QueueTables, queue: string, send: SendRows, row: JobRow): Promise<Enqueued> {
  const gatherings = exec.state.get(GATHERINGS);
  let byQueue = gatherings.get(exec);
  if (byQueue === undefined) gatherings.set(exec, (byQueue = new Map()));
  const key = `${t.jobs}\u0000${queue}`;
  let gathering = byQueue.get(key);
  if (gathering === undefined) byQueue.set(key, (gathering = new Gathering(send)));
  return gathering.add(row);
}
