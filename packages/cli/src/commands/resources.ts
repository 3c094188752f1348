import { durationFlag, need, parse, unknownAction } from '../args.js';
import { connect } from '../connect.js';
import { UsageError } from '../errors.js';
import type { Command } from './command.js';

const USAGE = 'taskrow resources show | edges [--since S] | upstream|downstream KEY | produce|force-release KEY...';
const ACTIONS = ['show', 'edges', 'upstream', 'downstream', 'produce', 'force-release'];

/** `taskrow resources ...`: running jobs, the flow graph, and the admin helpers. */
export const resourcesCommand: Command = async (argv, out) => {
  const { values, positionals } = parse(argv, { since: { type: 'string' }, ttl: { type: 'string' }, depth: { type: 'string' } });
  const action = need(positionals, 0, `action (${USAGE})`);
  if (!ACTIONS.includes(action)) throw unknownAction('resources', action, ACTIONS);
  const keys = positionals.slice(1);
  if (['show', 'edges'].includes(action) && keys.length > 0) throw new UsageError(`resources ${action} takes no keys`);
  if (['upstream', 'downstream'].includes(action) && keys.length !== 1) throw new UsageError(`resources ${action} takes one KEY`);
  if (['produce', 'force-release'].includes(action) && keys.length === 0) throw new UsageError(`resources ${action} needs at least one KEY`);
  const asJson = Boolean(values['json']);
  const since = values['since'] === undefined ? undefined : durationFlag(values, 'since', 0, 0, 1e13);
  const conn = await connect(values);
  try {
    const res = conn.tr.resources();
    switch (action) {
      case 'show': {
        const jobs = await res.running();
        await out.write(
          asJson
            ? `${JSON.stringify(jobs)}\n`
            : jobs
                .map((j) => `${j.job}\t${j.owner}\tlease until ${j.leaseUntil.toISOString()}\tin: ${j.inputs.join(',')}\tout: ${j.outputs.join(',')}\n`)
                .join(''),
        );
        return 0;
      }
      case 'edges':
      case 'upstream':
      case 'downstream': {
        const window = since === undefined ? {} : { after: new Date(Date.now() - since) };
        const edges = action === 'edges' ? await res.edges(window) : await res[action](keys[0]!, window);
        await out.write(asJson ? `${JSON.stringify(edges)}\n` : edges.map((e) => `${e.from}\t->\t${e.to}\t${e.lastSeen.toISOString()}\n`).join(''));
        return 0;
      }
      case 'produce': {
        const ttl = values['ttl'] === undefined ? null : durationFlag(values, 'ttl', 0, 1, 366 * 86_400_000);
        const n = await res.produce(keys, { ttl });
        await out.write(asJson ? `${JSON.stringify({ produced: n })}\n` : `${n}\n`);
        return 0;
      }
      default: {
        const n = await res.forceRelease({ inputs: keys, outputs: keys });
        await out.write(asJson ? `${JSON.stringify({ released: n })}\n` : `${n}\n`);
        return 0;
      }
    }
  } finally {
    await conn.close();
  }
};
