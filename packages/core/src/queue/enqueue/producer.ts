import { slot } from '../../instance.js';
import type { Executor } from '../../engine/executor.js';

/**
 * How long (ms) a process's enqueue connection stays kept after its last enqueue: long enough for
 * a stream of enqueues, short enough that an application ending its pool right after enqueuing
 * waits for it no longer than that.
 */
export const PRODUCER_IDLE_MS = 250;

const PRODUCERS = slot('producers', () => new WeakMap<Executor, Executor>());

/**
 * The executor that enqueues through `exec` run their transactions on (batches, dedup keys; a
 * single job's CALL is one autocommit statement and goes through the pool): one kept pooled connection shared by every
 * queue handle of `exec` (see `SqlSession`), so that after the first, an enqueue's transaction
 * begins with the previous one's `COMMIT AND CHAIN` (no BEGIN round trip). An enqueue asked while
 * another one runs on it takes its own connection, as before. The connection goes back to the pool
 * at once when another caller waits for one, after `PRODUCER_IDLE_MS` unused, and when the taskrow
 * instance closes. `exec` itself
 * for a joined client (the application's transaction) or a client without sessions.
 */
export function producerOf(exec: Executor): Executor {
  if (exec.client.joined) return exec;
  const producers = exec.state.get(PRODUCERS);
  let producer = producers.get(exec);
  if (producer === undefined) {
    const kept = exec.session({ idleMs: PRODUCER_IDLE_MS });
    exec.state.onClose(kept.end);
    producers.set(exec, (producer = kept.exec));
  }
  return producer;
}
