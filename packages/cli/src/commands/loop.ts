import type { Loop, LoopId } from '@taskrow/core';
import { intFlag, need, parse } from '../args.js';
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
  else yield* stdinLines();
}

/** JSON with bigints as numbers' text. */
const json = (v: unknown): string => JSON.stringify(v, (_, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));

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
  if (!ACTIONS.includes(action)) throw new UsageError(`unknown loop action ${JSON.stringify(action)} (${USAGE})`);
  const name = need(positionals, 1, 'LOOP');
  const rest = positionals.slice(2);
  if (['create', 'get', 'stats'].includes(action) && rest.length > 0) throw new UsageError(`loop ${action} takes no ids`);
  const asJson = Boolean(values['json']);
  const dryRun = Boolean(values['dry-run']);
  const autoAdd = !values['no-auto-add'];
  const lockFor = values['lock-for'] === undefined ? undefined : intFlag(values, 'lock-for', 0, -1e9, 1e9);
  const minLoopTime = values['min-loop-time'] === undefined ? undefined : intFlag(values, 'min-loop-time', 0, -1e9, 1e9);
  const idTypeFlag = parseIdTypeFlag(values['id-type'] as string | undefined);
  const conn = await connect(values);
  try {
    if (action === 'create') {
      await conn.tr.createLoop(name, idTypeFlag === undefined ? {} : { idType: idTypeFlag });
      await out.write(asJson ? `${json({ loop: name, created: true })}\n` : `loop ${name} ready\n`);
      return 0;
    }
    const loop = conn.tr.loop(name) as Loop<LoopId>;
    const type = await loop.idType();
    if (action === 'stats') {
      const stats = await loop.stats();
      await out.write(
        asJson
          ? `${json(stats)}\n`
          : Object.entries(stats)
              .map(([k, v]) => `${k}\t${v === null ? '' : idToText(v as LoopId)}\n`)
              .join(''),
      );
      return 0;
    }
    if (action === 'get') {
      const limit = intFlag(values, 'limit', 1, 0, 1_000_000);
      const ids = await loop.get(limit, { ...(lockFor === undefined ? {} : { lockFor }), ...(minLoopTime === undefined ? {} : { minLoopTime }), dryRun });
      await out.write(asJson ? `${json(ids)}\n` : ids.map((id) => `${idToText(id)}\n`).join(''));
      return 0;
    }
    let total = 0;
    for await (const batch of batches(idsFrom(rest), BATCH)) {
      const ids = batch.map((t) => idFromText(t, type));
      switch (action) {
        case 'add':
          total += await loop.add(ids, { updated: Boolean(values['updated']), dryRun });
          break;
        case 'remove':
          total += await loop.remove(ids, { dryRun });
          break;
        case 'did':
          total += await loop.did(ids, { autoAdd, dryRun });
          break;
        case 'unlock':
          total += await loop.unlock(ids, { autoAdd, dryRun });
          break;
        case 'bump':
          total += await loop.bump(ids, { autoAdd, dryRun, ...(lockFor === undefined ? {} : { lockFor }) });
          break;
        default: {
          const checked = await loop.check(ids);
          const lines = [...checked].map(([id, c]) =>
            asJson ? json({ id, sinceUpdated: c.sinceUpdated, lockedFor: c.lockedFor }) : `${idToText(id)}\t${c.sinceUpdated ?? ''}\t${c.lockedFor ?? ''}`,
          );
          if (lines.length > 0) await out.write(`${lines.join('\n')}\n`);
        }
      }
    }
    if (action !== 'check') await out.write(asJson ? `${json({ action, count: total, dryRun })}\n` : `${total}\n`);
    return 0;
  } finally {
    await conn.close();
  }
};
