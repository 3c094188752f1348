import type { Executor } from '../engine/executor.js';
import { queueTables } from '../queue/model/tables.js';
import { pageArgs } from './args.js';
import { queueNames, queueSummary } from './queues.js';
import { validateName } from '../names.js';
import { donesOne, donesPage, loopPage } from './registry.js';
import type { Inspect, QueueSummary } from './types.js';

/** The `Inspect` reads under one table prefix (see `Inspect` for the guarantees). */
export function createInspect(exec: Executor, prefix: string): Inspect {
  const qt = queueTables(prefix);
  return {
    async queues(options) {
      const a = pageArgs('inspect().queues()', options);
      const names = await queueNames(exec, qt, a.after, a.limit);
      const items: QueueSummary[] = [];
      for (const name of names.items) items.push(await queueSummary(exec, qt, name, a.countLimit));
      return { items, next: names.next };
    },
    async queue(name, options) {
      const a = pageArgs('inspect().queue()', options, ['countLimit']);
      return queueSummary(exec, qt, name, a.countLimit);
    },
    async loops(options) {
      const a = pageArgs('inspect().loops()', options, ['after', 'limit']);
      return loopPage(exec, prefix, a.after, a.limit);
    },
    async donesNamespaces(options) {
      const a = pageArgs('inspect().donesNamespaces()', options);
      return donesPage(exec, prefix, a.after, a.limit, a.countLimit);
    },
    async donesNamespace(name, options) {
      const a = pageArgs('inspect().donesNamespace()', options, ['countLimit']);
      return donesOne(exec, prefix, validateName('namespace', name), a.countLimit);
    },
  };
}
