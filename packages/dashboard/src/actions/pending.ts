import { seg } from '../context.js';
import { selectedIds } from './ids.js';
import { SEG, type Action, type ActionInput } from './types.js';

const queueOf = (input: ActionInput) => input.ctx.taskrow.queue(input.ctx.params[0]!);
const which = (ids: readonly number[]): string =>
  ids.length === 1 ? `job ${ids[0]}` : `${ids.length} selected job(s) (ids ${[...ids].sort((a, b) => a - b).join(', ')})`;

/**
 * Delete of jobs that have not started (`queue.remove`): the `id` fields (1 to 1,000), after a
 * confirmation that names the count. Ready, delayed and blocked jobs are deleted; running,
 * finished and dead jobs and unknown ids are left alone, and the result page says so.
 */
const remove: Action = {
  name: 'remove-jobs',
  pattern: new RegExp(`^/queues/${SEG}/remove$`),
  confirm: (input) => {
    const ids = selectedIds(input.form);
    return `Delete ${which(ids)} of queue ${queueOf(input).name} that have not started (ready, delayed or blocked)? Running, finished and dead jobs are left alone.`;
  },
  async run(input) {
    const ids = selectedIds(input.form);
    const queue = queueOf(input);
    const n = await queue.remove(ids);
    return {
      title: 'Delete jobs',
      what: `Queue ${queue.name}: deleted ${n} of ${ids.length} selected job(s) not yet started. Running, finished and dead jobs are left alone.`,
      back: `/queues/${seg(queue.name)}`,
      details: { queue: queue.name, ids, count: n },
    };
  },
};

/**
 * Run now of delayed jobs (`queue.promote`): the `id` fields (1 to 1,000), after a confirmation
 * that names the count. Delayed jobs (waiting to run or to retry) come due now; ready, blocked,
 * running, finished and dead jobs and unknown ids are left alone, and the result page says so.
 */
const promote: Action = {
  name: 'promote-jobs',
  pattern: new RegExp(`^/queues/${SEG}/promote$`),
  confirm: (input) => {
    const ids = selectedIds(input.form);
    return `Run ${which(ids)} of queue ${queueOf(input).name} now? Only delayed jobs are made due; the others are left alone.`;
  },
  async run(input) {
    const ids = selectedIds(input.form);
    const queue = queueOf(input);
    const n = await queue.promote(ids);
    const path = `/queues/${seg(queue.name)}`;
    return {
      title: 'Run jobs now',
      what: `Queue ${queue.name}: made ${n} of ${ids.length} selected delayed job(s) due now. Running, finished and dead jobs (and jobs not delayed) are left alone.`,
      back: ids.length === 1 ? `${path}/jobs/${ids[0]}` : path,
      details: { queue: queue.name, ids, count: n },
    };
  },
};

/**
 * The actions on jobs not yet started, each on the `id` fields (1 to 1,000) and only after a
 * confirmation naming the count: Delete (`/queues/NAME/remove`, ready, delayed and blocked jobs)
 * and Run now (`/queues/NAME/promote`, delayed jobs). Like every action they pass `checkAction`
 * (token session, same origin, CSRF; refused when read-only) and are logged with ids and count.
 */
export const PENDING_ACTIONS: readonly Action[] = [remove, promote];
