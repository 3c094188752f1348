import type { Executor } from '../engine/executor.js';
import { invalid } from '../errors.js';
import { validateName } from '../names.js';
import type { QueueTables } from '../queue/model/tables.js';
import { passOnce, startScheduler } from './runner.js';
import { scheduleRow } from './spec.js';
import { deleteSchedule, infoOf, readAll, readSchedule, upsertSchedule } from './store.js';
import type { Schedules } from './types.js';

/** The recurring schedules in `table` over `exec` (joined inside `in(tx)`: the writes join it). */
export function createSchedules(exec: Executor, table: string, queues: QueueTables): Schedules {
  const c = { exec, table, queues };
  const outside = (what: string): void => {
    if (exec.client.joined) throw invalid(`schedules.${what}() runs outside in(tx): each tick commits its own transaction`);
  };
  return {
    upsert: async (name, spec) => infoOf(await upsertSchedule(exec, table, scheduleRow(name, spec))),
    async get(name) {
      const s = await readSchedule(exec, table, validateName('schedule name', name));
      return s ? infoOf(s) : null;
    },
    list: async () => (await readAll(exec, table)).map((s) => infoOf(s)),
    remove: async (name) => deleteSchedule(exec, table, validateName('schedule name', name)),
    async runDue() {
      outside('runDue');
      return (await passOnce(c)).enqueued;
    },
    start(options) {
      outside('start');
      const scheduler = startScheduler(c, options);
      // `tr.close()` stops the scheduler; once stopped (by either), the instance forgets it.
      const forget = exec.state.onStop(() => scheduler.stop());
      return {
        get enqueued() {
          return scheduler.enqueued;
        },
        stop: async () => {
          forget();
          await scheduler.stop();
        },
      };
    },
  };
}
