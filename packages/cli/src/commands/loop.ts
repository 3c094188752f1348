import type { Loop, LoopId } from '@taskrow/core';
import { durationFlag, intFlag, need, parse, type Parsed, unknownAction } from '../args.js';
import { connect } from '../connect.js';
import { UsageError } from '../errors.js';
import { batches, stdinLines } from '../io.js';
import type { Command } from './command.js';
import { idFromText, idToText, parseIdTypeFlag } from './ids.js';

const USAGE = 'taskrow loop create|add|remove|get|did|unlock|bump|check|stats LOOP [ID...]';
const ACTIONS = ['create', 'add', 'remove', 'get', 'did', 'unlock', 'bump', 'check', 'stats'];
const BATCH = 1000;

async function* idsFrom(rest: string[]): AsyncGenerator<string> {
  if (rest.length > 0) yield* rest;
  else yield* stdinLines(process.stdin, 'ids');
}

/** JSON with bigints as numbers' text. */
const json = (v: unknown): string => JSON.stringify(v, (_, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));

/** The flags every loop action may read, checked before anything connects. */
interface LoopFlags {
  readonly dryRun: boolean;
  readonly autoAdd: boolean;
  readonly updated: boolean;
  readonly lockFor?: number;
  readonly minLoopTime?: number;
}

/** What one loop action works on: the loop, its id type, the ids given (arguments or stdin), the flags. */
interface LoopRun {
  readonly loop: Loop<LoopId>;
  readonly type: Awaited<ReturnType<Loop<LoopId>['idType']>>;
  readonly rest: string[];
  readonly values: Parsed['values'];
  readonly flags: LoopFlags;
  readonly asJson: boolean;
  readonly out: { write(text: string): Promise<void> };
}

/** An action over the ids in batches that resolves to how many rows it changed. */
type CountingAction = (loop: Loop<LoopId>, ids: LoopId[], flags: LoopFlags) => Promise<number>;

const COUNTING: Readonly<Record<string, CountingAction>> = {
  add: (loop, ids, f) => loop.add(ids, { updated: f.updated, dryRun: f.dryRun }),
  remove: (loop, ids, f) => loop.remove(ids, { dryRun: f.dryRun }),
  did: (loop, ids, f) => loop.did(ids, { autoAdd: f.autoAdd, dryRun: f.dryRun }),
  unlock: (loop, ids, f) => loop.unlock(ids, { autoAdd: f.autoAdd, dryRun: f.dryRun }),
  bump: (loop, ids, f) => loop.bump(ids, { autoAdd: f.autoAdd, dryRun: f.dryRun, ...(f.lockFor === undefined ? {} : { lockFor: f.lockFor }) }),
};

/** `stats`: the loop's counters, one `name<TAB>value` line each. */
async function stats({ loop, asJson, out }: LoopRun): Promise<void> {
  const s = await loop.stats();
  const lines = Object.entries(s).map(([k, v]) => `${k}\t${v === null ? '' : idToText(v as LoopId)}\n`);
  await out.write(asJson ? `${json(s)}\n` : lines.join(''));
}

/** `get`: leases up to `--limit` of the most overdue ids and prints them. */
async function get({ loop, values, flags, asJson, out }: LoopRun): Promise<void> {
  const limit = intFlag(values, 'limit', 1, 0, 1_000_000);
  const { lockFor, minLoopTime, dryRun } = flags;
  const ids = await loop.get(limit, { ...(lockFor === undefined ? {} : { lockFor }), ...(minLoopTime === undefined ? {} : { minLoopTime }), dryRun });
  await out.write(asJson ? `${json(ids)}\n` : ids.map((id) => `${idToText(id)}\n`).join(''));
}

/** `check`: per id, milliseconds since updated and milliseconds still locked. */
async function check({ loop, type, rest, asJson, out }: LoopRun): Promise<void> {
  for await (const batch of batches(idsFrom(rest), BATCH)) {
    const checked = await loop.check(batch.map((t) => idFromText(t, type)));
    const lines = [...checked].map(([id, c]) =>
      asJson ? json({ id, sinceUpdated: c.sinceUpdated, lockedFor: c.lockedFor }) : `${idToText(id)}\t${c.sinceUpdated ?? ''}\t${c.lockedFor ?? ''}`,
    );
    if (lines.length > 0) await out.write(`${lines.join('\n')}\n`);
  }
}

/** A counting action over every id given, then the total. */
async function counting(action: string, act: CountingAction, { loop, type, rest, flags, asJson, out }: LoopRun): Promise<void> {
  let total = 0;
  for await (const batch of batches(idsFrom(rest), BATCH))
    total += await act(
      loop,
      batch.map((t) => idFromText(t, type)),
      flags,
    );
  await out.write(asJson ? `${json({ action, count: total, dryRun: flags.dryRun })}\n` : `${total}\n`);
}

/** The loop flags, each checked. */
function loopFlags(values: Parsed['values']): LoopFlags {
  return {
    dryRun: Boolean(values['dry-run']),
    autoAdd: !values['no-auto-add'],
    updated: Boolean(values['updated']),
    ...(values['lock-for'] === undefined ? {} : { lockFor: durationFlag(values, 'lock-for', 0, -1e12, 1e12) }),
    ...(values['min-loop-time'] === undefined ? {} : { minLoopTime: durationFlag(values, 'min-loop-time', 0, -1e12, 1e12) }),
  };
}

/** `taskrow loop ...`: a doloop task loop. */
export const loopCommand: Command = async (argv, out) => {
  const { values, positionals } = parse(argv, {
    'id-type': { type: 'string' },
    limit: { type: 'string' },
    'lock-for': { type: 'string' },
    'min-loop-time': { type: 'string' },
    updated: { type: 'boolean' },
    'no-auto-add': { type: 'boolean' },
    'dry-run': { type: 'boolean' },
  });
  const action = need(positionals, 0, `action (${USAGE})`);
  if (!ACTIONS.includes(action)) throw unknownAction('loop', action, ACTIONS);
  const name = need(positionals, 1, 'LOOP');
  const rest = positionals.slice(2);
  if (['create', 'get', 'stats'].includes(action) && rest.length > 0) throw new UsageError(`loop ${action} takes no ids`);
  const asJson = Boolean(values['json']);
  const flags = loopFlags(values);
  const idTypeFlag = parseIdTypeFlag(values['id-type'] as string | undefined);
  const conn = await connect(values);
  try {
    if (action === 'create') {
      await conn.tr.createLoop(name, idTypeFlag === undefined ? {} : { idType: idTypeFlag });
      await out.write(asJson ? `${json({ loop: name, created: true })}\n` : `loop ${name} ready\n`);
      return 0;
    }
    const loop = conn.tr.loop(name) as Loop<LoopId>;
    const run: LoopRun = { loop, type: await loop.idType(), rest, values, flags, asJson, out };
    const counter = Object.hasOwn(COUNTING, action) ? COUNTING[action] : undefined;
    if (counter !== undefined) await counting(action, counter, run);
    else await ({ stats, get, check } as Record<string, (r: LoopRun) => Promise<void>>)[action]!(run);
    return 0;
  } finally {
    await conn.close();
  }
};
