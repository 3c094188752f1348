import { JOB_STATES, TaskrowError, type JobInfo, type JobState } from '@taskrow/core';
import { intFlag, need, parse, secondsFlag } from '../args.js';
import { connect } from '../connect.js';
import { UsageError } from '../errors.js';
import { batches, stdinLines } from '../io.js';
import type { Command } from './command.js';

const USAGE = 'taskrow queue enqueue|list|show|stats|retry-dead|purge-keys|pause|resume QUEUE [PAYLOAD_JSON... | ID]';
const ACTIONS = ['enqueue', 'list', 'show', 'stats', 'retry-dead', 'purge-keys', 'pause', 'resume'];

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

/** `taskrow queue ...`: look at and feed a job queue. */
export const queueCommand: Command = async (argv, out) => {
  const { values, positionals } = parse(argv, {
    delay: { type: 'string' },
    priority: { type: 'string' },
    'max-attempts': { type: 'string' },
    'dedup-key': { type: 'string' },
    group: { type: 'string' },
    'concurrency-key': { type: 'string' },
    limit: { type: 'string' },
    state: { type: 'string' },
    after: { type: 'string' },
  });
  const action = need(positionals, 0, `action (${USAGE})`);
  if (!ACTIONS.includes(action)) throw new UsageError(`unknown queue action ${JSON.stringify(action)} (${USAGE})`);
  const name = need(positionals, 1, 'QUEUE');
  const rest = positionals.slice(2);
  if (action === 'show' && rest.length !== 1) throw new UsageError('queue show takes one job ID');
  if (action !== 'enqueue' && action !== 'show' && rest.length > 0) throw new UsageError(`queue ${action} takes no payloads`);
  const id = action === 'show' ? Number(rest[0]) : 0;
  if (action === 'show' && !(/^\d+$/.test(rest[0]!) && Number.isSafeInteger(id) && id > 0)) {
    throw new UsageError(`job ID must be a whole number from 1, got ${JSON.stringify(rest[0])}`);
  }
  const asJson = Boolean(values['json']);
  const options = {
    ...(values['delay'] === undefined ? {} : { delay: secondsFlag(values, 'delay', 0, 0, 1e9) }),
    ...(values['priority'] === undefined ? {} : { priority: intFlag(values, 'priority', 0, -1e9, 1e9) }),
    ...(values['max-attempts'] === undefined ? {} : { maxAttempts: intFlag(values, 'max-attempts', 1, 1, 1000) }),
    ...(values['group'] === undefined ? {} : { group: values['group'] as string }),
    ...(values['concurrency-key'] === undefined ? {} : { concurrencyKey: values['concurrency-key'] as string }),
  };
  const dedupKey = values['dedup-key'] as string | undefined;
  const conn = await connect(values);
  try {
    const queue = conn.tr.queue(name);
    if (action === 'stats') {
      const s = await queue.stats();
      if (asJson) await out.write(`${JSON.stringify(s)}\n`);
      else {
        const lines = Object.entries(s.counts).map(([state, n]) => `${state}\t${n}`);
        lines.push(`oldest_runnable_age\t${s.oldestRunnableAge ?? ''}`, `paused_at\t${s.pausedAt?.toISOString() ?? '-'}`);
        await out.write(`${lines.join('\n')}\n`);
      }
      return 0;
    }
    if (action === 'list') {
      const states = statesFlag(values['state']);
      const page = await queue.list({
        limit: intFlag(values, 'limit', 100, 1, 1000),
        ...(states ? { state: states } : {}),
        ...(values['group'] === undefined ? {} : { group: values['group'] as string }),
        ...(values['after'] === undefined ? {} : { after: values['after'] as string }),
      });
      if (asJson) await out.write(`${JSON.stringify({ jobs: page.jobs, next: page.next ?? null })}\n`);
      else {
        await out.write(page.jobs.map((j) => `${jobLine(j)}\n`).join(''));
        if (page.next) process.stderr.write(`more: --after ${page.next}\n`);
      }
      return 0;
    }
    if (action === 'show') {
      const job = await queue.getJob(id);
      if (!job) throw new TaskrowError('NOT_FOUND', `queue ${JSON.stringify(name)} has no job ${id} (never enqueued, or finished and deleted)`);
      await out.write(asJson ? `${JSON.stringify(job)}\n` : jobFields(job));
      return 0;
    }
    if (action === 'pause' || action === 'resume') {
      await (action === 'pause' ? queue.pause() : queue.resume());
      const paused = await queue.isPaused();
      await out.write(asJson ? `${JSON.stringify({ queue: name, paused })}\n` : `${name}\t${paused ? 'paused' : 'running'}\n`);
      return 0;
    }
    if (action === 'retry-dead') {
      const n = await queue.retryDead(values['limit'] === undefined ? {} : { limit: intFlag(values, 'limit', 1, 1, 1_000_000) });
      await out.write(asJson ? `${JSON.stringify({ queue: name, retried: n })}\n` : `${n}\n`);
      return 0;
    }
    if (action === 'purge-keys') {
      const n = await queue.purgeKeys();
      await out.write(asJson ? `${JSON.stringify({ queue: name, purged: n })}\n` : `${n}\n`);
      return 0;
    }
    if (dedupKey !== undefined && rest.length !== 1) throw new UsageError('--dedup-key takes exactly one payload argument');
    let index = 0;
    let enqueued = 0;
    let deduplicated = 0;
    const source =
      rest.length > 0
        ? (async function* () {
            yield* rest;
          })()
        : stdinLines();
    for await (const batch of batches(source, 1000)) {
      const items = batch.map((text) => ({ payload: payloadOf(text, index++), ...options, ...(dedupKey === undefined ? {} : { dedupKey }) }));
      for (const r of await queue.enqueueMany(items)) r.deduplicated ? (deduplicated += 1) : (enqueued += 1);
    }
    await out.write(
      asJson
        ? `${JSON.stringify({ queue: name, enqueued, deduplicated })}\n`
        : `${enqueued} enqueued${deduplicated ? `, ${deduplicated} already queued` : ''}\n`,
    );
    return 0;
  } finally {
    await conn.close();
  }
};
