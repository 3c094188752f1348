import type { Dones } from '@taskrow/core';
import { intFlag, need, parse, type Parsed, unknownAction } from '../args.js';
import { connect } from '../connect.js';
import { EXIT_OK, UsageError } from '../errors.js';
import { batches, progress, stdinLines } from '../io.js';
import type { Command } from './command.js';

const BATCH = 5000;
/** `dones check`'s exit code when any key is pending (0 when all are done, 2 for usage). */
const EXIT_SOME_PENDING = 1;
const USAGE = 'taskrow dones mark|unmark|check|pending|count|list|clear NAMESPACE [KEY...]';

/** What one `dones` action works on: the namespace's Dones, its keys (arguments or stdin) and the flags. */
interface DonesRun {
  readonly d: Dones;
  readonly ns: string;
  readonly keys: () => AsyncIterable<string>;
  readonly values: Parsed['values'];
  readonly json: boolean;
  readonly out: { write(text: string): Promise<void> };
}

/** One action: resolves to the exit code. */
type DonesAction = (run: DonesRun) => Promise<number>;

/** Keys from the command line, or streamed from stdin when none are given. */
function keysFrom(rest: string[]): AsyncIterable<string> {
  if (rest.length > 0) {
    return (async function* () {
      yield* rest;
    })();
  }
  return stdinLines(process.stdin, 'keys');
}

/** `mark` or `unmark`: the keys in batches, with a progress line; prints how many changed. */
function changeKeys(kind: 'mark' | 'unmark'): DonesAction {
  return async ({ d, keys, json, out }) => {
    const bar = progress(kind === 'mark' ? 'marked' : 'unmarked');
    let seen = 0;
    let changed = 0;
    for await (const batch of batches(keys(), BATCH)) {
      changed += kind === 'mark' ? await d.mark(batch) : await d.unmark(batch);
      seen += batch.length;
      bar.tick(seen);
    }
    bar.done();
    const word = kind === 'mark' ? 'newly marked' : 'unmarked';
    await out.write(json ? `${JSON.stringify({ keys: seen, changed })}\n` : `${seen} keys, ${changed} ${word}\n`);
    return EXIT_OK;
  };
}

/** `check`: one line per key, done or pending; exits 1 when any is pending. */
const check: DonesAction = async ({ d, keys, json, out }) => {
  let pending = 0;
  for await (const batch of batches(keys(), BATCH)) {
    const done = new Set(await d.areDone(batch));
    pending += batch.filter((k) => !done.has(k)).length;
    const lines = batch.map((k) => (json ? JSON.stringify({ key: k, done: done.has(k) }) : `${done.has(k) ? 'done' : 'pending'}\t${k}`));
    await out.write(`${lines.join('\n')}\n`);
  }
  return pending > 0 ? EXIT_SOME_PENDING : EXIT_OK;
};

/** `pending`: the keys not done, streamed in blocks of 1,000 lines. */
const pendingKeys: DonesAction = async ({ d, keys, json, out }) => {
  const bar = progress('pending');
  let n = 0;
  let buf: string[] = [];
  for await (const key of d.pending(keys())) {
    buf.push(json ? JSON.stringify(key) : key);
    n += 1;
    if (buf.length >= 1000) {
      await out.write(`${buf.join('\n')}\n`);
      buf = [];
      bar.tick(n);
    }
  }
  if (buf.length > 0) await out.write(`${buf.join('\n')}\n`);
  bar.done();
  return EXIT_OK;
};

/** `list`: one page of done keys with when each was marked; the next page's cursor on stderr. */
const list: DonesAction = async ({ d, values, json, out }) => {
  const limit = intFlag(values, 'limit', 1000, 1, 10_000);
  const page = await d.list({ limit, ...(values['after'] ? { after: values['after'] as string } : {}) });
  if (json) await out.write(`${JSON.stringify({ entries: page.entries, next: page.next ?? null })}\n`);
  else {
    await out.write(page.entries.map((e) => `${e.markedAt.toISOString()}\t${e.key}\n`).join(''));
    if (page.next) process.stderr.write(`more: --after ${page.next}\n`);
  }
  return EXIT_OK;
};

const ACTIONS: Readonly<Record<string, DonesAction>> = {
  mark: changeKeys('mark'),
  unmark: changeKeys('unmark'),
  check,
  pending: pendingKeys,
  count: async ({ d, ns, json, out }) => {
    const n = await d.count();
    await out.write(json ? `${JSON.stringify({ namespace: ns, count: n })}\n` : `${n}\n`);
    return EXIT_OK;
  },
  list,
  clear: async ({ d, ns, json, out }) => {
    await d.clear({ purge: 'wait' });
    await out.write(json ? `${JSON.stringify({ namespace: ns, cleared: true })}\n` : `cleared ${ns}\n`);
    return EXIT_OK;
  },
};

/** `taskrow dones ...`: the Dones of one namespace. */
export const donesCommand: Command = async (argv, out) => {
  const { values, positionals } = parse(argv, { limit: { type: 'string' }, after: { type: 'string' } });
  const action = need(positionals, 0, `action (${USAGE})`);
  const run = Object.hasOwn(ACTIONS, action) ? ACTIONS[action] : undefined;
  if (run === undefined) throw unknownAction('dones', action, Object.keys(ACTIONS));
  const ns = need(positionals, 1, 'NAMESPACE');
  const rest = positionals.slice(2);
  if (['count', 'list', 'clear'].includes(action) && rest.length > 0) throw new UsageError(`dones ${action} takes no keys`);
  intFlag(values, 'limit', 1000, 1, 10_000);
  const conn = await connect(values);
  try {
    return await run({ d: conn.tr.dones(ns), ns, keys: () => keysFrom(rest), values, json: Boolean(values['json']), out });
  } finally {
    await conn.close();
  }
};
