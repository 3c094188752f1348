import { JOB_STATES, TaskrowError, type JobInfo, type JobState, type Queue, type RetentionOptions } from '@taskrow/core';
import { durationFlag, intFlag, need, parse, type Parsed, unknownAction } from '../args.js';
import { JOB_FLAGS, jobFlags } from '../job-flags.js';
import { connect } from '../connect.js';
import { UsageError } from '../errors.js';
import { batches, stdinLines } from '../io.js';
import type { Command } from './command.js';

const USAGE = 'taskrow queue enqueue|list|show|stats|remove|promote|retry-dead|purge|purge-keys|pause|resume QUEUE [PAYLOAD_JSON... | ID...]';

/** `--state ready,dead`: the states to list, each checked. */
function statesFlag(raw: string | boolean | undefined): JobState[] | undefined {
  if (raw === undefined) return undefined;
  const states = String(raw).split(',');
  for (const s of states) {
    if (!(JOB_STATES as readonly string[]).includes(s))
      throw new UsageError(`--state must be a comma-separated list of ${JOB_STATES.join(', ')}, got ${JSON.stringify(raw)}`);
  }
  return states as JobState[];
}

/** One job as a line: id, state, attempt/max, priority, group, due time, payload JSON; tab-separated. */
function jobLine(j: JobInfo): string {
  return [j.id, j.state, `${j.attempt}/${j.maxAttempts}`, j.priority, j.group ?? '-', j.dueAt.toISOString(), JSON.stringify(j.payload)].join('\t');
}

/** Parses one JSON payload from the command line or stdin, naming its position when it is not JSON. */
function payloadOf(text: string, index: number): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UsageError(`payload #${index} is not JSON: ${text.length > 60 ? `${text.slice(0, 60)}...` : text}`);
  }
}

/** One job as `field<TAB>value` lines, the last error (a stack, several lines) last. */
function jobFields(j: JobInfo): string {
  const time = (d: Date | null): string => (d ? d.toISOString() : '-');
  const fields: [string, string | number][] = [
    ['id', j.id],
    ['queue', j.queue],
    ['state', j.state],
    ['attempt', j.attempt],
    ['max_attempts', j.maxAttempts],
    ['priority', j.priority],
    ['group', j.group ?? '-'],
    ['run_at', time(j.runAt)],
    ['due_at', time(j.dueAt)],
    ['created_at', time(j.createdAt)],
    ['finished_at', time(j.finishedAt)],
    ['payload', JSON.stringify(j.payload)],
    ['progress', JSON.stringify(j.progress)],
    ['result', JSON.stringify(j.result)],
    ['last_error', j.lastError ?? '-'],
  ];
  return fields.map(([k, v]) => `${k}\t${v}\n`).join('');
}

/** What one `queue` action works on: the queue, the arguments after its name, and the flags. */
interface QueueRun {
  readonly queue: Queue;
  readonly name: string;
  readonly rest: string[];
  readonly values: Parsed['values'];
  readonly json: boolean;
  readonly out: { write(text: string): Promise<void> };
}

/** One action: resolves to the exit code. */
type QueueAction = (run: QueueRun) => Promise<number>;

/** `stats`: jobs per state, the oldest runnable job's age and the pause time. */
const stats: QueueAction = async ({ queue, json, out }) => {
  const s = await queue.stats();
  if (json) await out.write(`${JSON.stringify(s)}\n`);
  else {
    const lines = Object.entries(s.counts).map(([state, n]) => `${state}\t${n}`);
    lines.push(`oldest_runnable_age_ms\t${s.oldestRunnableAge ?? ''}`, `paused_at\t${s.pausedAt?.toISOString() ?? '-'}`);
    await out.write(`${lines.join('\n')}\n`);
  }
  return 0;
};

/** `list`: one page of jobs, one line each; the next page's cursor on stderr. */
const list: QueueAction = async ({ queue, values, json, out }) => {
  const states = statesFlag(values['state']);
  const page = await queue.list({
    limit: intFlag(values, 'limit', 100, 1, 1000),
    ...(states ? { state: states } : {}),
    ...(values['group'] === undefined ? {} : { group: values['group'] as string }),
    ...(values['after'] === undefined ? {} : { after: values['after'] as string }),
  });
  if (json) await out.write(`${JSON.stringify({ jobs: page.jobs, next: page.next ?? null })}\n`);
  else {
    await out.write(page.jobs.map((j) => `${jobLine(j)}\n`).join(''));
    if (page.next) process.stderr.write(`more: --after ${page.next}\n`);
  }
  return 0;
};

/** `show ID`: every field of one job; NOT_FOUND when the queue has no such job. */
const show: QueueAction = async ({ queue, name, rest, json, out }) => {
  const id = Number(rest[0]);
  const job = await queue.getJob(id);
  if (!job) throw new TaskrowError('NOT_FOUND', `queue ${JSON.stringify(name)} has no job ${id} (never enqueued, or finished and deleted)`);
  await out.write(json ? `${JSON.stringify(job)}\n` : jobFields(job));
  return 0;
};

/** `pause` or `resume`, then prints whether the queue is paused. */
function setPaused(pause: boolean): QueueAction {
  return async ({ queue, name, json, out }) => {
    await (pause ? queue.pause() : queue.resume());
    const paused = await queue.isPaused();
    await out.write(json ? `${JSON.stringify({ queue: name, paused })}\n` : `${name}\t${paused ? 'paused' : 'running'}\n`);
    return 0;
  };
}

/** `enqueue`: payloads from the arguments or stdin (one JSON per line), in batches of 1,000. */
const enqueue: QueueAction = async ({ queue, name, rest, values, json, out }) => {
  const options = jobFlags(values);
  let index = 0;
  let enqueued = 0;
  let deduplicated = 0;
  const source =
    rest.length > 0
      ? (async function* () {
          yield* rest;
        })()
      : stdinLines(process.stdin, 'payloads (JSON)');
  for await (const batch of batches(source, 1000)) {
    const items = batch.map((text) => ({ payload: payloadOf(text, index++), ...options }));
    for (const r of await queue.enqueueMany(items)) r.deduplicated ? (deduplicated += 1) : (enqueued += 1);
  }
  await out.write(
    json ? `${JSON.stringify({ queue: name, enqueued, deduplicated })}\n` : `${enqueued} enqueued${deduplicated ? `, ${deduplicated} already queued` : ''}\n`,
  );
  return 0;
};

/** `purge`'s retention flags, each checked before anything connects. */
function retentionFlags(values: Parsed['values']): RetentionOptions {
  const count = (name: string): number | undefined => (values[name] === undefined ? undefined : intFlag(values, name, 0, 0, 1_000_000_000));
  const finished = count('keep-finished-count');
  const dead = count('keep-dead-count');
  return {
    ...(finished === undefined ? {} : { keepFinishedCount: finished }),
    ...(values['keep-dead-for'] === undefined ? {} : { keepDeadFor: durationFlag(values, 'keep-dead-for', 0, 0, 315_360_000_000) }),
    ...(dead === undefined ? {} : { keepDeadCount: dead }),
  };
}

/** A count-returning action, printed as the count or `{queue, <field>: n}`. */
function counted(field: string, act: (run: QueueRun) => Promise<number>): QueueAction {
  return async (run) => {
    const n = await act(run);
    await run.out.write(run.json ? `${JSON.stringify({ queue: run.name, [field]: n })}\n` : `${n}\n`);
    return 0;
  };
}

const ACTIONS: Readonly<Record<string, QueueAction>> = {
  enqueue,
  list,
  show,
  stats,
  remove: counted('removed', ({ queue, rest }) => queue.remove(rest.map(Number))),
  promote: counted('promoted', ({ queue, rest }) => queue.promote(rest.map(Number))),
  'retry-dead': counted('retried', ({ queue, values }) =>
    queue.retryDead(values['limit'] === undefined ? {} : { limit: intFlag(values, 'limit', 1, 1, 1_000_000) }),
  ),
  purge: counted('purged', ({ queue, values }) => queue.purge(retentionFlags(values))),
  'purge-keys': counted('purged', ({ queue }) => queue.purgeKeys()),
  pause: setPaused(true),
  resume: setPaused(false),
};

/** Checks the positionals of `action` before anything connects (a UsageError names what is wrong). */
function checkArguments(action: string, rest: readonly string[], values: Parsed['values']): void {
  if (action === 'show' && rest.length !== 1) throw new UsageError('queue show takes one job ID');
  if ((action === 'remove' || action === 'promote') && (rest.length === 0 || rest.length > 1000))
    throw new UsageError(`queue ${action} takes 1 to 1,000 job IDs`);
  if (action === 'show' || action === 'remove' || action === 'promote') {
    for (const text of rest) {
      const id = Number(text);
      if (!(/^\d+$/.test(text) && Number.isSafeInteger(id) && id > 0))
        throw new UsageError(`job ID must be a whole number from 1, got ${JSON.stringify(text)}`);
    }
  } else if (action !== 'enqueue' && rest.length > 0) throw new UsageError(`queue ${action} takes no payloads`);
  if (action === 'purge') retentionFlags(values);
  if (action === 'enqueue') {
    jobFlags(values);
    if (values['dedup-key'] !== undefined && rest.length !== 1) throw new UsageError('--dedup-key takes exactly one payload argument');
  }
}

/** `taskrow queue ...`: look at and feed a job queue. */
export const queueCommand: Command = async (argv, out) => {
  const { values, positionals } = parse(argv, {
    ...JOB_FLAGS,
    limit: { type: 'string' },
    state: { type: 'string' },
    after: { type: 'string' },
    'keep-finished-count': { type: 'string' },
    'keep-dead-for': { type: 'string' },
    'keep-dead-count': { type: 'string' },
  });
  const action = need(positionals, 0, `action (${USAGE})`);
  const run = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined;
  if (run === undefined) throw unknownAction('queue', action, Object.keys(ACTIONS));
  const name = need(positionals, 1, 'QUEUE');
  const rest = positionals.slice(2);
  checkArguments(action, rest, values);
  const conn = await connect(values);
  try {
    return await run({ queue: conn.tr.queue(name), name, rest, values, json: Boolean(values['json']), out });
  } finally {
    await conn.close();
  }
};
