import { ROUTINES } from '../queue/procedures.js';
import { installedHashes } from '../queue/routines/install.js';
import { routineStatements } from '../queue/routines/index.js';
import { result, type DoctorContext } from './context.js';
import type { DoctorCheck } from './types.js';

/** The path each procedure serves (its name without the prefix), as a reader of the report knows it. */
const SERVES: Readonly<Record<string, string>> = {
  enqueue_job: 'a single enqueue',
  enqueue_jobs: 'an enqueue of 2 to 32 jobs',
  enqueue_job_and_hand: "the doorbell's hand-off of a job to a sleeping worker",
  enqueue_jobs_leased: 'the hand-off of new jobs to an idle worker of the same process',
  claim_jobs: 'a claim',
};

/** What makes every procedure current. */
const fixFor =
  'run migrate() (taskrow migrate) as a user granted CREATE ROUTINE, ALTER ROUTINE and EXECUTE on the database; grant EXECUTE to every user taskrow runs as';

/**
 * The `procedures` check: compares the Queue's stored procedures installed under the prefix with
 * this build's, by the content hash each one's comment carries. Names each missing or outdated
 * one and the path that then runs statement by statement; says why the fast path is off when the
 * adapter's client may not CALL (`SqlClient.endsInterrupted`). Read-only: one read of
 * `information_schema.ROUTINES`, which shows a user only the procedures it has a privilege on.
 */
export async function proceduresCheck(ctx: DoctorContext): Promise<DoctorCheck> {
  const wanted = routineStatements(ROUTINES, ctx.prefix, ctx.exec.dialect.engine);
  const have = await installedHashes(
    ctx.exec,
    wanted.map((w) => w.name),
  );
  const missing = wanted.filter((w) => !have.has(w.name)).map((w) => w.name);
  const outdated = wanted.filter((w) => have.has(w.name) && have.get(w.name) !== w.hash).map((w) => w.name);
  const details = { current: wanted.length - missing.length - outdated.length, missing, outdated, callable: ctx.exec.client.endsInterrupted === true };
  if (missing.length + outdated.length === 0) {
    if (details.callable) return result('procedures', 'ok', `all ${wanted.length} stored procedures are current: the fast path is on`, undefined, details);
    const why = `all ${wanted.length} stored procedures are current, but the ${ctx.exec.client.adapter} client does not end an interrupted statement's transaction, so enqueues go statement by statement`;
    return result('procedures', 'ok', why, undefined, details);
  }
  if (missing.length === wanted.length) {
    const none = `none of the ${wanted.length} stored procedures is installed or visible to this user (a user without EXECUTE sees none): every Queue path (enqueue, claim, the doorbell's hand-off) runs statement by statement, with more round trips per job`;
    return result('procedures', 'warn', none, fixFor, details);
  }
  const serves = (name: string): string => SERVES[name.slice(ctx.prefix.length)] ?? 'a Queue path';
  const parts = [
    ...missing.map((n) => `${n} missing: ${serves(n)} runs statement by statement, with more round trips`),
    ...outdated.map((n) => `${n} from another build: ${serves(n)} runs that build's text`),
  ];
  const summary = `${missing.length + outdated.length} of ${wanted.length} stored procedures not current; ${parts.join('; ')}`;
  return result('procedures', 'warn', summary, fixFor, details);
}
