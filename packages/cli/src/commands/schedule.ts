import { TaskrowError, type MissedPolicy, type ScheduleInfo, type ScheduleSpec } from '@taskrow/core';
import { durationFlag, need, parse, unknownAction } from '../args.js';
import { JOB_FLAGS, jobFlags } from '../job-flags.js';
import { connect } from '../connect.js';
import { UsageError } from '../errors.js';
import type { Command } from './command.js';

const USAGE = 'taskrow schedule list | add NAME --queue Q (--cron EXPR [--tz TZ] | --every DURATION) [PAYLOAD_JSON] | remove NAME';
const ACTIONS = ['list', 'add', 'remove'];

/** `--missed skip|once|each:N`. */
function missedFlag(raw: string | boolean | undefined): MissedPolicy | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'skip' || raw === 'once') return raw;
  const m = /^each:(\d{1,4})$/.exec(String(raw));
  if (!m) throw new UsageError(`--missed must be skip, once or each:N, got ${JSON.stringify(raw)}`);
  return { each: Number(m[1]) };
}

/** One schedule as a line: name, queue, cron pattern (with its zone) or `every Ns`, missed policy, next and last tick, payload. */
function scheduleLine(s: ScheduleInfo): string {
  const when = s.cron !== null ? `cron ${s.cron} ${s.tz}` : `every ${(s.every ?? 0) / 1000}s`;
  const missed = typeof s.missed === 'object' ? `each:${s.missed.each}` : s.missed;
  return [s.name, s.queue, when, missed, s.nextAt?.toISOString() ?? '-', s.lastAt?.toISOString() ?? '-', JSON.stringify(s.payload)].join('\t');
}

/** The spec `schedule add` stores, from its flags and its one optional payload argument. */
function specOf(values: Record<string, string | boolean | undefined>, payloadText: string | undefined): ScheduleSpec {
  const queue = values['queue'];
  if (typeof queue !== 'string') throw new UsageError('schedule add needs --queue QUEUE');
  let payload: unknown = null;
  if (payloadText !== undefined) {
    try {
      payload = JSON.parse(payloadText) as unknown;
    } catch {
      throw new UsageError(`payload is not JSON: ${payloadText.length > 60 ? `${payloadText.slice(0, 60)}...` : payloadText}`);
    }
  }
  const str = (name: string): string | undefined => (values[name] === undefined ? undefined : String(values[name]));
  const options = jobFlags(values);
  const missed = missedFlag(values['missed']);
  return {
    queue,
    ...(values['cron'] === undefined ? {} : { cron: str('cron') }),
    ...(values['tz'] === undefined ? {} : { tz: str('tz') }),
    ...(values['every'] === undefined ? {} : { every: durationFlag(values, 'every', 1000, 1000, 315_360_000_000) }),
    payload,
    options,
    ...(missed === undefined ? {} : { missed }),
  };
}

/** `taskrow schedule ...`: the Queue's recurring schedules. */
export const scheduleCommand: Command = async (argv, out) => {
  const { values, positionals } = parse(argv, {
    queue: { type: 'string' },
    cron: { type: 'string' },
    tz: { type: 'string' },
    every: { type: 'string' },
    missed: { type: 'string' },
    ...JOB_FLAGS,
  });
  const action = need(positionals, 0, `action (${USAGE})`);
  if (!ACTIONS.includes(action)) throw unknownAction('schedule', action, ACTIONS);
  const name = action === 'list' ? undefined : need(positionals, 1, 'NAME');
  const rest = positionals.slice(action === 'list' ? 1 : 2);
  if (rest.length > (action === 'add' ? 1 : 0))
    throw new UsageError(`schedule ${action} takes ${action === 'add' ? 'at most one payload' : 'no more arguments'}, got ${JSON.stringify(rest.join(' '))}`);
  const spec = action === 'add' ? specOf(values, rest[0]) : undefined;
  const asJson = Boolean(values['json']);
  const conn = await connect(values);
  try {
    const schedules = conn.tr.schedules();
    if (action === 'list') {
      const all = await schedules.list();
      await out.write(asJson ? `${JSON.stringify(all)}\n` : all.map((s) => `${scheduleLine(s)}\n`).join(''));
    } else if (action === 'add') {
      const s = await schedules.upsert(name!, spec!);
      await out.write(asJson ? `${JSON.stringify(s)}\n` : `${scheduleLine(s)}\n`);
    } else {
      if (!(await schedules.remove(name!))) throw new TaskrowError('NOT_FOUND', `there is no schedule ${JSON.stringify(name)}`);
      await out.write(asJson ? `${JSON.stringify({ schedule: name, removed: true })}\n` : `${name}\tremoved\n`);
    }
    return 0;
  } finally {
    await conn.close();
  }
};
