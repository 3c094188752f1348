// A pipeline of jobs chained through Resources (jobs.py's input/output locks): extract -> transform
// -> report for each day. Every job declares its inputs and outputs and runs with `run()`; a job
// waits until its inputs exist, refuses to run when they never appear, and the flow history shows
// the graph, with the days collapsed into `*`.
import mysql from 'mysql2/promise';
import { ResourceUnavailableError } from '@taskrow/core';
import { taskrow } from '@taskrow/mysql2';
import { database, flags, numberFlag, run } from 'taskrow-examples-common';
import { reasons, runStep, steps, type Outcome } from './pipeline.js';

const USAGE = `usage: node dist/main.js [--days N] [--fail-day K] [--wait S] [--work-ms N]

  --days N       days to process, from 2024-01-01 (default 3)
  --fail-day K   the transform of day K fails, so its report is refused (default: the last day; 0: none)
  --wait S       seconds a job waits for its inputs to exist (default 3)
  --work-ms N    simulated work per job (default 50)

  TASKROW_URL    mysql://user:password@host:3306/database (required)
  TASKROW_PREFIX table prefix (default taskrow_)`;

async function main(): Promise<number> {
  const { values } = flags({ days: { type: 'string' }, 'fail-day': { type: 'string' }, wait: { type: 'string' }, 'work-ms': { type: 'string' } });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const count = numberFlag(values.days, 'days', 3, 1, 3650);
  const failDay = numberFlag(values['fail-day'], 'fail-day', count, 0, count);
  const wait = numberFlag(values.wait, 'wait', 3, 0, 3600, true);
  const workMs = numberFlag(values['work-ms'], 'work-ms', 50, 0, 3_600_000);
  const days = Array.from({ length: count }, (_, i) => new Date(Date.UTC(2024, 0, 1 + i)).toISOString().slice(0, 10));
  const db = database();
  const pool = mysql.createPool({ uri: db.url, connectionLimit: 10 });
  try {
    const tr = await taskrow(pool, db.options);
    await tr.migrate();
    const res = tr.resources();
    const log = (line: string): void => console.log(`  ${line}`);
    const outputs = days.flatMap((day) => steps(day).flatMap((s) => s.outputs));
    const reset = await res.unproduce(outputs); // every run of the example starts with no outputs
    console.log(`resources-pipeline: ${days.length} days (${days[0]} .. ${days.at(-1)}), table prefix ${tr.prefix}; ${reset} outputs of an earlier run reset`);

    // A report cannot run before its input exists: canRun() says why, run() refuses.
    const [, , report] = steps(days[0]!);
    const check = await res.job(report!.job, { inputs: report!.inputs, outputs: report!.outputs }).canRun();
    console.log(`canRun ${report!.job}: ${check.ok ? 'ok' : check.reasons.map((r) => `${r.reason} on ${r.key}`).join(', ')}`);
    try {
      await res.run(report!.job, { inputs: report!.inputs, outputs: report!.outputs }, () => undefined);
      console.log(`run ${report!.job}: ran (unexpected: its input existed)`);
    } catch (err) {
      if (!(err instanceof ResourceUnavailableError)) throw err;
      console.log(`run ${report!.job}: refused: ${reasons(err)}`);
    }

    // Every job of every day starts at once; each waits for its inputs, so they run in order.
    console.log('pipeline:');
    const outcomes: Outcome[] = await Promise.all(
      days.flatMap((day, d) => steps(day).map((step, s) => runStep(res, step, { wait, workMs, fails: d + 1 === failDay && s === 1 }, log))),
    );
    const n = (o: Outcome): number => outcomes.filter((x) => x === o).length;
    const existing = await res.exists(outputs);
    console.log(`jobs: ${n('ran')} ran, ${n('failed')} failed, ${n('refused')} refused; outputs existing: ${existing.length} of ${outputs.length}`);

    const edges = await res.edges();
    console.log(`flow graph (${edges.length} edges):`);
    for (const e of edges) console.log(`  ${e.from} -> ${e.to}`);
    const down = await res.downstream(`raw.events.${days[0]}`);
    console.log(`downstream of raw.events.${days[0]}: ${down.map((e) => `${e.to} (depth ${e.depth})`).join(', ')}`);
    await tr.close();
    return 0;
  } finally {
    await pool.end();
  }
}

run('resources-pipeline', USAGE, main);
