import { hostname } from 'node:os';
import type { Executor } from '../engine/executor.js';
import { boolArg, optionsOf } from '../validate.js';
import { existing, forceRelease, produceKeys, runningJobs, sweep, unproduceKeys } from './admin.js';
import { EdgeThrottle, queryEdges, traverse } from './history.js';
import { Job, type JobContext } from './job.js';
import { resKey, resKeys } from './names.js';
import { DEFAULT_SETTINGS } from './options.js';
import type { ResourcesTables } from './tables.js';
import type { Resources, ResourcesOptions } from './types.js';

/** `host:pid`, recorded with every acquisition so `running()` says where a job runs. */
function owner(): string {
  return `${hostname()}:${process.pid}`.slice(0, 255);
}

/** Creates the Resources of one taskrow (see the `Resources` interface for the guarantees). */
export function createResources(exec: Executor, t: ResourcesTables, options: ResourcesOptions = {}): Resources {
  optionsOf('resources()', options, ['history', 'releaseOnExit']);
  const ctx: JobContext = {
    exec,
    t,
    history: options.history === undefined ? true : boolArg('resources() history', options.history),
    releaseOnExit: options.releaseOnExit === undefined ? true : boolArg('resources() releaseOnExit', options.releaseOnExit),
    throttle: new EdgeThrottle(),
    owner: owner(),
    defaults: DEFAULT_SETTINGS,
  };
  const resources: Resources = {
    job: (name, jobOptions) => new Job(ctx, name, jobOptions),
    acquire: (name, jobOptions) => {
      try {
        return new Job(ctx, name, jobOptions).acquire();
      } catch (err) {
        return Promise.reject(err);
      }
    },
    run: async (name, jobOptions, fn) => new Job(ctx, name, jobOptions).run(fn),
    exists: async (keys) => existing(exec, t, resKeys(keys, 'key')),
    produce: async (keys, produceOptions) => produceKeys(exec, t, keys, produceOptions),
    unproduce: async (keys) => unproduceKeys(exec, t, keys),
    forceRelease: async (keys) => forceRelease(exec, t, keys),
    running: () => runningJobs(exec, t),
    sweep: () => sweep(exec, t),
    edges: async (window) => queryEdges(exec, t, window),
    downstream: async (name, o) => traverse(exec, t, resKey(name, 'start').key, true, o),
    upstream: async (name, o) => traverse(exec, t, resKey(name, 'start').key, false, o),
  };
  return resources;
}
