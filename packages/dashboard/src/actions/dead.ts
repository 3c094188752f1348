import { seg } from '../context.js';
import { Refused } from '../refused.js';
import { idsOf, selectedIds } from './ids.js';
import { SEG, type Action, type ActionInput, type Outcome } from './types.js';

type Op = 'retry' | 'delete';

const queueOf = (input: ActionInput) => input.ctx.taskrow.queue(input.ctx.params[0]!);

async function apply(input: ActionInput, op: Op, ids: readonly number[] | undefined, which: string): Promise<Outcome> {
  const queue = queueOf(input);
  const path = `/queues/${seg(queue.name)}`;
  const back = ids?.length === 1 && which.startsWith('dead job ') ? `${path}/jobs/${ids[0]}` : path;
  const details = { queue: queue.name, ids: ids ?? 'all dead' };
  if (op === 'retry') {
    const n = await queue.retryDead(ids === undefined ? {} : { ids });
    return { title: 'Retry dead jobs', what: `Queue ${queue.name}: made ${n} job(s) ready again (${which}).`, back, details: { ...details, count: n } };
  }
  const n = await queue.purgeDead(ids === undefined ? {} : { ids });
  return { title: 'Delete dead jobs', what: `Queue ${queue.name}: deleted ${n} job(s) (${which}).`, back: path, details: { ...details, count: n } };
}

/** One dead job (`id`) or every dead job of the queue; every dead job asks for confirmation first. */
function oneOrAll(op: Op, verb: string): Action {
  return {
    name: `${op}-dead`,
    pattern: new RegExp(`^/queues/${SEG}/${op}-dead$`),
    confirm: (input) => (idsOf(input.form) === undefined ? `${verb} every dead job of queue ${queueOf(input).name}?` : undefined),
    run: (input) => {
      const ids = idsOf(input.form)?.slice(0, 1);
      return apply(input, op, ids, ids === undefined ? 'every dead job' : `dead job ${ids[0]}`);
    },
  };
}

function opOf(form: URLSearchParams): Op {
  const op = form.get('op');
  if (op !== 'retry' && op !== 'delete') throw new Refused(400, `op must be retry or delete, got ${JSON.stringify(op?.slice(0, 20) ?? null)}`);
  return op;
}

/** The jobs ticked on the queue page (`id` fields), retried or deleted (`op`), after a confirmation. */
const selected: Action = {
  name: 'selected',
  pattern: new RegExp(`^/queues/${SEG}/selected$`),
  confirm: (input) => {
    const ids = selectedIds(input.form);
    const verb = opOf(input.form) === 'retry' ? 'Retry' : 'Delete';
    return `${verb} ${ids.length} selected dead job(s) of queue ${queueOf(input).name} (ids ${ids.join(', ')})?`;
  },
  run: (input) => {
    const ids = selectedIds(input.form);
    return apply(input, opOf(input.form), ids, `${ids.length} selected`);
  },
};

/** The dead-job actions: one, every, or a selection, retried or deleted. */
export const DEAD_ACTIONS: readonly Action[] = [oneOrAll('retry', 'Retry'), oneOrAll('delete', 'Delete'), selected];
