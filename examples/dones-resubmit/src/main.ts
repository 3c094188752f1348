// Cluster resubmission with Dones: jobs mark their tasks done as they finish, some jobs die, and the
// task list is then streamed through `pending()` to find exactly the tasks to submit again.
import mysql from 'mysql2/promise';
import { taskrow } from '@taskrow/mysql2';
import { generatedTasks, readTasks, shellQuote, taskLines } from './tasks.js';
import { runRound } from './cluster.js';
import { database, flags, numberFlag, run } from 'taskrow-examples-common';

const USAGE = `usage: node dist/main.js [TASKS_FILE] [--tasks N] [--jobs N] [--die SHARE] [--checkpoint N] [--namespace NAME] [--show N]

  TASKS_FILE        one task per line (blank lines skipped, CRLF accepted); default: generate --tasks tasks
  --tasks N         tasks to generate when no file is given (default 1000)
  --jobs N          cluster jobs the tasks are split over (default 20)
  --die SHARE       share of the jobs that die part-way, 0 to 1 (default 0.3)
  --checkpoint N    a job marks its finished tasks every N tasks (default 25)
  --namespace NAME  the Dones namespace of this run (default resubmit-demo); cleared at the start
  --show N          resubmission command lines to print (default 5)

  TASKROW_URL       mysql://user:password@host:3306/database (required)
  TASKROW_PREFIX    table prefix (default taskrow_)`;

function options() {
  const { values, positionals } = flags(
    {
      tasks: { type: 'string' },
      jobs: { type: 'string' },
      die: { type: 'string' },
      checkpoint: { type: 'string' },
      namespace: { type: 'string' },
      show: { type: 'string' },
    },
    1,
  );
  return {
    help: values.help === true,
    file: positionals[0],
    tasks: numberFlag(values.tasks, 'tasks', 1000, 1, 10_000_000),
    jobs: numberFlag(values.jobs, 'jobs', 20, 1, 10_000),
    die: numberFlag(values.die, 'die', 0.3, 0, 1, true),
    checkpoint: numberFlag(values.checkpoint, 'checkpoint', 25, 1, 100_000),
    namespace: values.namespace ?? 'resubmit-demo',
    show: numberFlag(values.show, 'show', 5, 0, Number.MAX_SAFE_INTEGER),
  };
}

async function main(): Promise<number> {
  const opts = options();
  if (opts.help) {
    console.log(USAGE);
    return 0;
  }
  const db = database();
  const pool = mysql.createPool({ uri: db.url, connectionLimit: 10 });
  try {
    const tr = await taskrow(pool, db.options);
    await tr.migrate();
    const dones = tr.dones(opts.namespace);
    await dones.clear({ purge: 'wait' }); // every run of the example starts from a fresh namespace

    // Round 1: the tasks go out as cluster jobs; each marks its tasks as it finishes them.
    const tasks = opts.file === undefined ? [...generatedTasks(opts.tasks)] : await readTasks(opts.file);
    const source = opts.file === undefined ? `${tasks.length} generated tasks` : `${tasks.length} tasks from ${opts.file}`;
    console.log(`dones-resubmit: namespace "${opts.namespace}", ${source}, ${opts.jobs} jobs (table prefix ${tr.prefix})`);
    const round = await runRound(dones, tasks, { jobs: opts.jobs, die: opts.die, checkpoint: opts.checkpoint });
    const done = await dones.count();
    console.log(`round 1: ${round.jobs} jobs ran, ${round.died} died part-way; ${done} tasks marked done`);

    // Resubmission: stream the task list (the file itself, again) through pending().
    console.log('resubmit (printed, not run):');
    let candidates = 0;
    let pending = 0;
    const counted = async function* (source: Iterable<string> | AsyncIterable<string>) {
      for await (const task of source) {
        candidates += 1;
        yield task;
      }
    };
    const stream = opts.file === undefined ? generatedTasks(opts.tasks) : taskLines(opts.file);
    for await (const task of dones.pending(counted(stream))) {
      pending += 1;
      if (pending <= opts.show) console.log(`  bsub -J ${shellQuote(`${opts.namespace}:${task}`)} -o logs/%J.out node task.js ${shellQuote(task)}`);
    }
    if (pending > opts.show) console.log(`  ... and ${pending - opts.show} more`);
    console.log(`pending: ${pending} of ${candidates} tasks are not done and would be resubmitted`);
    await tr.close();
    return 0;
  } finally {
    await pool.end();
  }
}

run('dones-resubmit', USAGE, main);
