import { fork, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Scene } from './lib.js';

/** The worker processes of scenarios e and f: worker-process.mjs, their ledger files, their verdict. */

const script = fileURLToPath(new URL('./worker-process.mjs', import.meta.url));

/** Starts worker-process.mjs with `env` (see there) added to this process's; resolves once its worker runs. */
export function startWorkerProcess(env: Record<string, string>, children: Set<ChildProcess>): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = fork(script, [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    children.add(child);
    child.once('message', () => resolve(child));
    child.once('exit', () => children.delete(child));
    child.once('error', reject);
  });
}

/** Creates the table the handlers write their effects to (one row per run that committed); returns its name. */
export async function effectsTable(scene: Scene): Promise<string> {
  const effects = `${scene.prefix}effects`;
  await scene.probe(
    `CREATE TABLE \`${effects}\` (seq INT NOT NULL, job_id BIGINT UNSIGNED NOT NULL, token BIGINT UNSIGNED NOT NULL, pid INT NOT NULL, KEY (seq)) ENGINE=InnoDB`,
  );
  return effects;
}

/** Effect rows per sequence number. */
export async function effectsOf(scene: Scene, effects: string): Promise<Map<number, number>> {
  const rows = await scene.probe<{ seq: number; n: number }>(`SELECT seq, COUNT(*) AS n FROM \`${effects}\` GROUP BY seq`);
  return new Map(rows.map((r) => [Number(r.seq), Number(r.n)]));
}

/** One `run` or `done` line of a worker process's ledger (see worker-process.mjs). */
export interface Line {
  kind: 'run' | 'done';
  seq: number;
  id: number;
  token: bigint;
  /** The claim's attempt count: the job's latest claim has the highest. */
  attempt: number;
}

/** What the worker processes wrote to their ledger files in `dir`. */
export interface Ledgers {
  readonly lines: Line[];
  /** What the workers reported (`onError`). */
  readonly errors: string[];
  /** Application statements a `KILL QUERY` interrupted on a live connection (scenario f). */
  readonly strays: string[];
  /** Application statements that ran, summed over the processes (counted in steps of 50). */
  readonly app: number;
}

export function readLedgers(dir: string): Ledgers {
  const lines: Line[] = [];
  const errors: string[] = [];
  const strays: string[] = [];
  let app = 0;
  for (const f of readdirSync(dir)) {
    let last = 0;
    for (const l of readFileSync(join(dir, f), 'utf8').split('\n')) {
      const [kind, seq, id, token, attempt] = l.split(' ');
      if (kind === 'error') errors.push(l.slice(6));
      else if (kind === 'stray') strays.push(l.slice(6));
      else if (kind === 'app') last = Number(seq);
      else if (kind === 'run' || kind === 'done') lines.push({ kind, seq: Number(seq), id: Number(id), token: BigInt(token!), attempt: Number(attempt) });
    }
    app += last;
  }
  return { lines, errors, strays, app };
}

/** The ledgers' verdict against the effect rows the probe found (`effectOf`: seq -> rows) and the enqueued sequence numbers. */
export interface Verdict {
  /** Enqueued sequence numbers with no effect. */
  readonly lost: number;
  /** Extra job ids beyond one per sequence number. */
  readonly duplicated: number;
  /** Sequence numbers with two effects or two confirmed completions. */
  readonly doubles: number;
  /** Confirmed completions by a claim that was not the job's latest. */
  readonly stale: number;
  /** Handler runs beyond one per job. */
  readonly reruns: number;
}

export function verdict(enqueued: ReadonlySet<number>, lines: readonly Line[], effectOf: ReadonlyMap<number, number>): Verdict {
  const idsOf = new Map<number, Set<number>>();
  // The latest claim of a job is the one that counted the most attempts (tokens are random per claim).
  const latest = new Map<number, { attempt: number; token: bigint }>();
  const doneOf = new Map<number, Line[]>();
  for (const l of lines) {
    idsOf.set(l.seq, (idsOf.get(l.seq) ?? new Set()).add(l.id));
    if (l.kind === 'run' && (latest.get(l.id)?.attempt ?? -1) < l.attempt) latest.set(l.id, { attempt: l.attempt, token: l.token });
    if (l.kind === 'done') doneOf.set(l.seq, [...(doneOf.get(l.seq) ?? []), l]);
  }
  return {
    lost: [...enqueued].filter((s) => !effectOf.has(s)).length,
    duplicated: [...idsOf.values()].reduce((n, s) => n + s.size - 1, 0),
    doubles: [...effectOf.values()].filter((n) => n > 1).length + [...doneOf.values()].filter((d) => d.length > 1).length,
    stale: [...doneOf.values()].flat().filter((d) => d.token !== latest.get(d.id)?.token).length,
    reruns: lines.filter((l) => l.kind === 'run').length - enqueued.size,
  };
}
