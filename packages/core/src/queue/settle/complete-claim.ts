import { ClaimCall, claimCallable, claimJobs, takeHeadTurn, type ClaimArgs, type ClaimState } from '../claim/claim.js';
import { LeaseLostError } from '../model/errors.js';
import { completeJobs, completeThen } from './settle.js';
import type { AckContext } from './context.js';
import { aloneOn } from '../claim/call.js';
import type { Job, JobRef } from '../model/types.js';

/** What `completeAndClaim` did: the jobs it claimed, and the completion's `LeaseLostError` when some jobs were not held. */
export interface CompletedAndClaimed<P> {
  readonly jobs: Job<P>[];
  readonly lost: LeaseLostError | undefined;
}

/**
 * Completes `refs` (as `completeJobs`, with `results` by job id) and claims up to `args.limit`
 * jobs (as `claimJobs`). While other processes claim the queue (not `aloneOn`) and the claim may go
 * as one CALL, the completion goes apart from it: fewer round trips than one transaction.
 * Otherwise both go in one transaction when every job was still held: the fenced write, the
 * claim's locking read and lease, one COMMIT (six statements where the two apart take eight). When
 * a job was not held, the whole transaction rolls back and both go their own way: the completion
 * through the checking path (held jobs completed, the others named in `lost`), then a claim of its
 * own. After a lost connection the retried run first looks for the jobs the lost run claimed: when
 * it finds some, that run committed (completion and claim alike) and they are returned; otherwise
 * the completion is proven through the checking path before a new claim. MUST NOT complete a job
 * twice nor leave a claimed job leased to nobody. Other errors reject with nothing claimed; the
 * completion may then have gone through or not, as after a failed `complete()`.
 */
export async function completeAndClaim<P>(
  c: AckContext,
  refs: readonly JobRef[],
  results: ReadonlyMap<number, string> | undefined,
  args: ClaimArgs,
  state: ClaimState,
  progress: (job: JobRef, value: unknown) => Promise<void>,
): Promise<CompletedAndClaimed<P>> {
  const claim = (): Promise<Job<P>[]> => claimJobs<P>(c.exec, c.t, c.queue, args, state, progress);
  if (refs.length === 0) return { jobs: await claim(), lost: undefined };
  const callable = args.limit > 0 && claimCallable(c.exec, c.t, args, state);
  if (callable && !aloneOn(c.exec, c.t, c.queue)) {
    // The claim is one CALL of its own (see `claim/call.ts`): fewer round trips than sharing the completion's transaction.
    const lost = await completeJobs(c, refs, results).then(
      () => undefined,
      (err: unknown) => {
        if (err instanceof LeaseLostError) return err;
        throw err;
      },
    );
    return { jobs: await claim(), lost };
  }
  if (args.limit > 0) await takeHeadTurn(c.exec, c.t, c.queue, state.cursor, args.group);
  const call = new ClaimCall<P>(c.t, c.queue, args, state, c.exec.client.joined, progress);
  let lost: LeaseLostError | undefined;
  const found = await completeThen(
    c,
    refs,
    results,
    args.limit === 0 ? undefined : { run: (conn) => call.run(conn), recover: (conn) => call.lostBefore(conn) },
  ).catch((err: unknown) => {
    if (!(err instanceof LeaseLostError)) throw err;
    lost = err;
    return undefined;
  });
  return { jobs: found ? call.jobs(found) : await claim(), lost };
}
