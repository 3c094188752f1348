import { TaskrowError, type JobState } from '@taskrow/core';
import { seg, type Page, type PageContext } from '../context.js';
import { html } from '../html/escape.js';
import { pretty, time } from '../html/format.js';
import { actionForm } from './parts.js';

/** A job id from the path: a positive safe integer, else INVALID_ARGUMENT naming it. */
export function jobId(text: string): number {
  const id = Number(text);
  if (!/^[1-9]\d{0,15}$/.test(text) || !Number.isSafeInteger(id)) {
    throw new TaskrowError('INVALID_ARGUMENT', `job id must be a positive integer, got ${JSON.stringify(text.slice(0, 40))}`);
  }
  return id;
}

/** What a job's `dueAt` means in each state. */
const STATE_TIME: Record<JobState, string> = {
  ready: 'due since',
  delayed: 'runs at',
  running: 'lease expires',
  done: 'kept until',
  dead: 'died at',
  blocked: 'state time',
};

/** The states of a job not yet started: it can be deleted (and run now when delayed). */
const PENDING: ReadonlySet<JobState> = new Set(['ready', 'delayed', 'blocked']);

/** One job by id (`getJob`): every field, progress, result and payload pretty-printed, its last error; retry or delete when dead; delete when not started, and run now when delayed. */
export async function jobPage(ctx: PageContext): Promise<Page> {
  const queue = ctx.taskrow.queue(ctx.params[0]!);
  const id = jobId(ctx.params[1]!);
  const job = await queue.getJob(id);
  const back = html`<p><a href="${ctx.link(`/queues/${seg(queue.name)}`)}">← queue ${queue.name}</a></p>`;
  if (!job) {
    return {
      title: `Job ${id}`,
      body: html`${back}<h1>Job ${id}</h1><p class="notice">No job ${id} in queue ${queue.name}: it completed (and was deleted), or never existed.</p>`,
    };
  }
  const path = `/queues/${seg(queue.name)}`;
  const one = { id: String(id) };
  const actions =
    job.state === 'dead'
      ? html`<p>${actionForm(ctx, `${path}/retry-dead`, 'Retry this job', one)} ${actionForm(ctx, `${path}/delete-dead`, 'Delete this job', one)}</p>`
      : PENDING.has(job.state)
        ? html`<p>${job.state === 'delayed' ? html`${actionForm(ctx, `${path}/promote`, 'Run this job now', one)} ` : ''}${actionForm(ctx, `${path}/remove`, 'Delete this job', one)}</p>`
        : '';
  return {
    title: `Job ${id}`,
    body: html`${back}<h1>Job ${id} <span class="state ${job.state === 'dead' ? 'bad' : ''}">${job.state}</span></h1>${actions}
<div class="card"><dl>
<dt>queue</dt><dd>${job.queue}</dd><dt>state</dt><dd class="job-state">${job.state}</dd>
<dt>attempts</dt><dd class="job-attempts">${job.attempt} of ${job.maxAttempts}</dd><dt>priority</dt><dd>${job.priority}</dd>
<dt>group</dt><dd>${job.group ?? '—'}</dd><dt>concurrency key</dt><dd>${job.concurrencyKey ?? '—'}</dd><dt>run at</dt><dd>${time(job.runAt)}</dd>
<dt>${STATE_TIME[job.state]}</dt><dd class="job-due">${time(job.dueAt)}</dd><dt>created</dt><dd>${time(job.createdAt)}</dd><dt>finished</dt><dd>${time(job.finishedAt)}</dd>
</dl></div>
<h2>Progress</h2><div class="card"><pre class="progress">${job.progress === null ? '—' : pretty(job.progress)}</pre></div>
<h2>Result</h2><div class="card"><pre class="result">${job.result === null ? '—' : pretty(job.result)}</pre></div>
<h2>Payload</h2><div class="card"><pre class="payload">${pretty(job.payload)}</pre></div>
<h2>Last error</h2><div class="card"><pre class="last-error">${job.lastError ?? '—'}</pre></div>`,
  };
}
